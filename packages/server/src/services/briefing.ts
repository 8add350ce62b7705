import type { Briefing, BriefingDigest } from 'cairn-memory-client';
import { z } from 'zod';
import { fitToBudget } from '../cortex/briefing-size.ts';
import { allRecords, COLLECTIONS } from '../cortex/cortex-records.ts';
import type { ConfidenceDrop, Digest, OpenItem, RecentChange } from '../cortex/digest-types.ts';
import { INDEX_FACTS } from '../cortex/digests/registry.ts';
import { byTimeDesc, NewestByTime, shortText } from '../cortex/fields.ts';
import type { Pattern } from '../cortex/patterns.ts';
import { readDigests } from '../cortex/read-digests.ts';
import { Rollup } from '../cortex/rollup.ts';
import { namespaceScope } from '../cortex/scopes.ts';
import { newestTracesUnder } from '../cortex/trace-paths.ts';
import type { Trace } from '../cortex/traces.ts';
import { AgentIdSchema, EntityPathSchema, NamespaceSchema, pathHasPrefix } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import { listPrefixFor, namespaceFor, pathVisible, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { cortexStatus } from './cortex-status.ts';
import { judgedEntries } from './judged-entries.ts';
import { digestVisible } from './list-digests.ts';
import { patternRecords } from './list-patterns.ts';
import { digestForKey } from './digest-for-key.ts';
import { AsOfSchema, asOfInstant } from './as-of.ts';
import { pastScope } from './briefing-as-of.ts';
import { wholeNumber } from './schemas.ts';

export const BriefingInput = z
  .object({
    namespace: NamespaceSchema.optional(),
    entity_path: EntityPathSchema.optional().describe('The scope to brief on: this path and everything below it. Absent: the whole namespace.'),
    agent_id: AgentIdSchema.optional().describe('Who is asking: their own writes are left out of recent changes (they know them).'),
    limit: wholeNumber(1, 100).default(10).describe('Most items per list.'),
    max_chars: wholeNumber(500, 200_000).default(8000).describe('Size cap of the whole answer, as JSON characters.'),
    discredited: z
      .enum(['hide', 'include', 'apart'])
      .default('hide')
      .describe('Entries that recorded outcomes discredit: hide them (default), include them, or list them apart in tried_and_failed.'),
    as_of: AsOfSchema.optional(),
  })
  .strict();
export type BriefingInput = z.input<typeof BriefingInput>;

/** Path digests a briefing draws its items from: the most recently changed under the scope. */
const MAX_DIGESTS = 200;
/** Path digests read from the store at a time. */
const PAGE = 500;

const changedAt = (d: Digest): string | null => d.summary.last_change?.written_at ?? null;

/**
 * Every path digest under a briefing's scope, folded in a page at a time so that memory stays
 * bounded however many paths there are: the MAX_DIGESTS most recently changed, and the
 * overview's roll-up of all of them.
 */
class PathScan {
  readonly rollup = new Rollup();
  newest: Digest[] = [];

  add(page: Digest[]): void {
    this.rollup.add(page);
    this.newest = [...this.newest, ...page].sort(byTimeDesc(changedAt)).slice(0, MAX_DIGESTS);
  }
}

/** The path digests under the scope, compiled ones read a page at a time. */
const scanPaths = async (deps: ServiceDeps, ctx: Context, namespace: string, prefix: string | undefined, past: Digest[] | null): Promise<PathScan> => {
  const scan = new PathScan();
  const asSeen = digestForKey(ctx);
  if (past) {
    for (let i = 0; i < past.length; i += PAGE) scan.add(past.slice(i, i + PAGE).map(asSeen));
    return scan;
  }
  const visible = digestVisible(ctx);
  let after: string | undefined;
  do {
    const page = await readDigests(deps.store, { namespace, scope: prefix, type: 'path', limit: PAGE, visible, ...(after === undefined ? {} : { after }) });
    scan.add(page.digests.map(asSeen));
    after = page.more && page.last !== null ? page.last : undefined;
  } while (after !== undefined);
  return scan;
};

/** A digest without its per-item indexes (every incident, every deploy): the headline and counts are what a prompt needs. */
const compact = (d: Digest): BriefingDigest => {
  const facts = Object.fromEntries(Object.entries(d.facts).filter(([k]) => !INDEX_FACTS.has(k)));
  return { scope: d.scope, type: d.type, version: d.version, compiled_at: d.compiled_at, headline: d.headline, facts };
};

/**
 * GET /api/v1/briefing: what an agent should know now about a scope, compact enough for a
 * prompt — the Cortex's digests (an overview when the scope spans several paths), open
 * items, recent changes by others, patterns, decision traces and entries whose confidence
 * fell, and the entries recorded outcomes contest (discredited ones are left out unless
 * asked for). Everything comes from the compiled records; the cap (`max_chars`) trims it to fit.
 * The answer's shape, `Briefing`, is declared in the client: the compiler holds this to it.
 */
export const briefing = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<Briefing> => {
  const input = parseInput(BriefingInput, raw);
  requireScope(ctx, 'read');
  const namespace = namespaceFor(ctx, input.namespace);
  const prefix = listPrefixFor(ctx, input.entity_path);
  const under = (path: string | null): boolean => path !== null && (prefix === undefined || pathHasPrefix(path, prefix)) && pathVisible(ctx, path);
  const visible = digestVisible(ctx);
  const asOf = asOfInstant(deps, input.as_of);
  // As of a past instant: digests compiled from the versions current then (briefing-as-of.ts),
  // and only the patterns and traces detected by then.
  const past = asOf === undefined ? null : await pastScope(deps, namespace, prefix, under, asOf);
  const by = (at: string | null | undefined): boolean => asOf === undefined || (at != null && Date.parse(at) <= asOf);

  // Every path digest under the scope counts toward the overview; items come from the most recently changed.
  const scan = await scanPaths(deps, ctx, namespace, prefix, past ? past.digests : null);
  const paths = scan.newest;
  const whole = prefix === undefined && !past ? (await readDigests(deps.store, { namespace, scope: namespaceScope(namespace), limit: 1, visible })).digests[0] : undefined;
  const overview = whole ?? (scan.rollup.paths > 1 ? { ...scan.rollup.draft('namespace', namespace, prefix ?? namespace), version: 0, compiled_at: paths[0]?.compiled_at ?? '' } : undefined);

  // Patterns: the id range of the scope (ids begin with the kind and the path). Traces: a
  // trace's id names only one of the paths its chain links, so a scope's come through the
  // trace index (trace-paths.ts), the newest first; the whole namespace's, or any scope's
  // while the index is not ready, from every trace of the namespace.
  const patterns = new NewestByTime<Pattern>((p) => p.detected_at, input.limit);
  for await (const p of patternRecords(deps, namespace, prefix)) if (under(p.entity_path) && by(p.detected_at)) patterns.offer(p);
  const traces = new NewestByTime<Trace>((t) => t.chain[0]?.at ?? null, input.limit);
  const shown = (t: Trace): boolean => t.chain.some((l) => under(l.entity_path)) && t.chain.every((l) => pathVisible(ctx, l.entity_path)) && by(t.detected_at);
  const indexed = prefix === undefined ? undefined : await newestTracesUnder(deps.store, namespace, prefix, input.limit, shown);
  if (indexed) for (const t of indexed) traces.offer(t);
  else for await (const r of allRecords(deps.store, COLLECTIONS.traces(namespace))) if (shown(r.data as unknown as Trace)) traces.offer(r.data as unknown as Trace);

  const source = overview ? [overview, ...paths] : paths;
  const dedupe = <T extends { entity_path: string; key: string }>(items: T[]): T[] => [...new Map(items.map((i) => [`${i.entity_path}\u0000${i.key}`, i])).values()];
  const open_items = dedupe(source.flatMap((d) => d.open_items)).filter((i) => under(i.entity_path)).sort(byTimeDesc<OpenItem>((i) => i.since)).slice(0, input.limit);
  let recent_changes: RecentChange[] = dedupe(source.flatMap((d) => d.recent_changes)).filter((c) => under(c.entity_path) && c.agent_id !== input.agent_id);
  if (source.length === 0 && !past) recent_changes = await liveChanges(deps, namespace, prefix, input.agent_id);
  const confidence_drops = dedupe(source.flatMap((d) => d.confidence_drops)).filter((c) => under(c.entity_path)).sort(byTimeDesc<ConfidenceDrop>((c) => c.at));
  const status = await cortexStatus(deps, ctx);
  const judged = past ? past.judged : await judgedEntries(deps, namespace, under);
  const discredited = new Set(judged.filter((j) => j.status === 'discredited').map((j) => `${j.entity_path}\u0000${j.key}`));
  const credited = <T extends { entity_path: string; key: string }>(item: T): boolean =>
    input.discredited === 'include' || !discredited.has(`${item.entity_path}\u0000${item.key}`);

  return fitToBudget({
    namespace,
    entity_path: prefix ?? null,
    agent_id: input.agent_id ?? null,
    generated_at: new Date(deps.now()).toISOString(),
    as_of: asOf === undefined ? null : new Date(asOf).toISOString(),
    cortex: { status: status.status, last_compiled_at: status.last_compiled_at, lag_ms: status.lag_ms, compiled: source.length > 0 },
    overview: overview?.headline ?? paths[0]?.headline ?? null,
    digests: [...(whole ? [whole] : []), ...paths].slice(0, input.limit).map(compact),
    open_items: open_items.filter(credited),
    recent_changes: recent_changes.filter(credited).sort(byTimeDesc((c) => c.written_at)).slice(0, input.limit),
    patterns: patterns.items().map(({ id, kind, entity_path, title, detail, detected_at }) => ({ id, kind, entity_path, title, detail, detected_at })),
    traces: traces.items().map(({ id, title, reason, chain, detected_at }) => ({ id, title, reason, chain, detected_at })),
    confidence_drops: confidence_drops.slice(0, input.limit),
    contested: judged.filter((j) => j.status === 'contested').sort(byTimeDesc((j) => j.written_at)).slice(0, input.limit),
    ...(input.discredited === 'apart' ? { tried_and_failed: judged.filter((j) => j.status === 'discredited').sort(byTimeDesc((j) => j.written_at)).slice(0, input.limit) } : {}),
  }, input.max_chars, ['recent_changes', 'open_items', 'digests', 'traces', 'patterns', 'confidence_drops', 'contested', 'tried_and_failed']);
};

/** Before the Cortex has compiled anything here, recent changes come straight from the store. */
const liveChanges = async (deps: ServiceDeps, namespace: string, prefix: string | undefined, agentId: string | undefined): Promise<RecentChange[]> => {
  const page = await deps.store.list({ namespace, prefix, limit: 1000, now: deps.now() });
  return page.entries
    .filter((e) => e.agent_id !== agentId)
    .map((e) => ({ entity_path: e.entity_path, key: e.key, version: e.version, agent_id: e.agent_id, event_type: e.event_type, written_at: e.written_at, confidence: e.confidence, summary: shortText(e.value) }));
};
