import { CompileInterrupted, type Compiler } from './compiler.ts';
import { digestTypeOf } from './digests/registry.ts';
import type { PathFailures } from './path-failures.ts';

/** Paths compiled together in a fallback round (see compileSingly). */
const GROUP_PATHS = 64;

/** One entity path of one namespace to compile. */
interface Scope {
  namespace: string;
  entityPath: string;
}

/** What the fallback needs of the loop running it. */
export interface FallbackContext {
  compiler: Compiler;
  failures: PathFailures;
  /** False once the loop stops: no further path is tried. */
  running: () => boolean;
  /** Passed to each compile: whether it must stop at its next path. */
  interrupted: (ns: string) => boolean;
  /** These paths compiled: none of them is failing now, and the backend is up. */
  worked: (group: Scope[]) => void;
  /** A path failed alone while others worked: noted, and retried after its own delay. */
  pathFailed: (d: Scope, error: unknown) => void;
}

/** `items` in runs of one namespace, each at most `size` long, in their order within a namespace. */
const groupsOf = <T extends Scope>(items: T[], size: number): T[][] => {
  const byNamespace = new Map<string, T[]>();
  for (const item of items) {
    const run = byNamespace.get(item.namespace);
    if (run) run.push(item);
    else byNamespace.set(item.namespace, [item]);
  }
  const groups: T[][] = [];
  for (const run of byNamespace.values()) for (let i = 0; i < run.length; i += size) groups.push(run.slice(i, i + size));
  return groups;
};

/** Paths in the order compilePaths compiles them: by type, and chat scopes (which read open incidents) last. */
const compileOrder = <T extends Scope>(items: T[]): T[] =>
  [...items].sort((a, b) => {
    const ta = digestTypeOf(a.entityPath);
    const tb = digestTypeOf(b.entityPath);
    return Number(ta.readsOpenIncidents) - Number(tb.readsOpenIncidents) || ta.order - tb.order;
  });

/** One path compiled alone: null when it worked, else what it failed with. */
const alone = async <T extends Scope>(ctx: FallbackContext, d: T, pending: Set<T>, done: (group: T[]) => void): Promise<unknown> => {
  try {
    await ctx.compiler.compilePaths(d.namespace, [d.entityPath], ctx.interrupted);
    done([d]);
    return null;
  } catch (error) {
    if (error instanceof CompileInterrupted) throw error;
    pending.delete(d);
    return error ?? new Error('compile failed');
  }
};

/**
 * Compile `items` a group at a time, and a group that fails one path at a time (compilePaths
 * with one path: it still recompiles the chat scopes naming an incident whose state changed),
 * in compile order, paths already failing last and always alone. Groups, not single paths
 * throughout: each compilePaths ends by syncing the namespace's roll-ups from every digest, so
 * a fallback of one path at a time over thousands of paths cost minutes (4,800 paths: 2.3 s →
 * 33 s). A path that fails alone is retried after its own delay (ctx.pathFailed). But a failure
 * of a path not known to fail, before any path of the round worked, is taken as the backend
 * failing: the round stops, and that is returned (the path is noted as failing, so the next
 * round tries it alone, on its own delay). `pending` loses each item attempted.
 *
 * `triedTogether`: the paths not known to fail were just compiled as one job, which failed, so
 * a group holding all of them is not compiled again before its paths are tried one at a time.
 */
export const compileSingly = async <T extends Scope>(
  ctx: FallbackContext,
  items: T[],
  pending: Set<T>,
  triedTogether = false,
): Promise<{ error: unknown; at: T } | null> => {
  let worked = false;
  // Which paths were failing before this round, decided once: a path found failing in the
  // first loop below has had its try this round and is not compiled again in the second.
  const known = new Set(items.filter((d) => ctx.failures.has(d.namespace, d.entityPath)));
  const fresh = items.filter((d) => !known.has(d));
  const done = (group: T[]): void => {
    for (const d of group) pending.delete(d);
    worked = true;
    ctx.worked(group);
  };
  for (const group of groupsOf(compileOrder(fresh), GROUP_PATHS)) {
    if (!ctx.running()) return null;
    if (group.length > 1 && !(triedTogether && group.length === fresh.length)) {
      try {
        await ctx.compiler.compilePaths(group[0]?.namespace as string, group.map((d) => d.entityPath), ctx.interrupted);
        done(group);
        continue;
      } catch (error) {
        if (error instanceof CompileInterrupted) throw error;
        // One of them fails: find it, one path at a time.
      }
    }
    for (const d of group) {
      const failed = await alone(ctx, d, pending, done);
      if (failed === null) continue;
      if (!worked) {
        ctx.failures.suspect(d.namespace, d.entityPath);
        return { error: failed, at: d };
      }
      ctx.pathFailed(d, failed);
    }
  }
  for (const d of compileOrder([...known])) {
    if (!ctx.running()) return null;
    const failed = await alone(ctx, d, pending, done);
    if (failed !== null) ctx.pathFailed(d, failed);
  }
  return null;
};
