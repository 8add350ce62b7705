import { z } from 'zod';
import { awaitApplied, markApplied, noteForget, unapplied } from '../../cortex/forget-journal.ts';
import { readSharedStatus } from '../../cortex/heartbeat.ts';
import type { ForgetTarget } from '../../domain/forget-target.ts';
import { EntityPathSchema, KeySchema, NamespaceSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import type { EntryAddress } from '../../domain/entry.ts';
import { recordAudit } from '../audit-log.ts';
import { namespaceFor, requirePath, requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { FreeTextSchema } from '../schemas.ts';
import { forgetEvidence } from '../judged-entries.ts';
import { purgeDerived } from './purge-derived.ts';
import { scrubAudit } from './scrub-audit.ts';

export const ForgetInput = z
  .object({
    namespace: NamespaceSchema.optional(),
    entity_path: EntityPathSchema.describe('Forget every entry at or under this entity path (segment-wise), or with `key`, the one entry there.'),
    key: KeySchema.optional(),
    reason: FreeTextSchema(500).optional().describe('Why, for the audit log (never the forgotten content).'),
  })
  .strict();

export interface ForgetAnswer {
  /** The entries removed with all their versions (none: nothing matched). */
  forgotten: EntryAddress[];
  /** Cortex records (digests, patterns, traces, compile events) removed with them. */
  derived_removed: number;
}

/**
 * Make Cairn forget: remove an entry, or every entry under a path, with all its versions, from
 * the store (bytes included, after the compaction the store runs), the search index, the
 * Cortex's records and every replica's copies. The audit log records who forgot which path,
 * when and why, never what was forgotten; the content hashes its earlier events held of the
 * forgotten entries go (scrub-audit.ts).
 */
export const forgetEntries = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<ForgetAnswer> => {
  requireScope(ctx, 'admin');
  const input = parseInput(ForgetInput, raw);
  const namespace = namespaceFor(ctx, input.namespace);
  requirePath(ctx, input.entity_path);
  const target = { namespace, prefix: input.entity_path, ...(input.key === undefined ? {} : { key: input.key }) };
  // Derived records go first, so the compaction the forget runs leaves no copy of them. A
  // compile racing the forget may write some again: the active Cortex worker, told of the
  // forget, deletes them itself before it answers (cortexApplied); without one, a second
  // sweep does. One more compaction takes the bytes the racing writes left.
  let derived_removed = await purgeDerived(deps.store, target);
  // The evidence pointers (path and key of each judged entry) too, before and after the forget:
  // an outcome racing it may have written one again.
  await forgetEvidence(deps.store, target);
  // The audit log's content hashes too, before the forget, so that its compaction takes the
  // batches' old bytes; writes racing the forget are scrubbed by the second pass.
  const scrubbedAt = deps.now();
  await scrubAudit(deps, target);
  const forgotten = await deps.store.forget(target);
  if (forgotten.length > 0) {
    const applied = await cortexApplied(deps, target);
    // Not after a worker applied it: the worker is rebuilding what still derives, which this
    // sweep would delete again (a key's path digest cites the path).
    const late = applied ? 0 : await purgeDerived(deps.store, target);
    const lateHashes = await scrubAudit(deps, target, scrubbedAt);
    await forgetEvidence(deps.store, target);
    if (late > 0 || lateHashes > 0 || applied || deps.cortex) await deps.store.compact();
    derived_removed += late;
  }
  await deps.search?.persisted();
  await recordAudit(deps, ctx, namespace, {
    action: 'entries.forgotten',
    target: { entity_path: input.entity_path, ...(input.key === undefined ? {} : { key: input.key }) },
    changes: { entries: forgotten.length, ...(input.reason === undefined ? {} : { reason: input.reason }) },
  });
  return { forgotten, derived_removed };
};

/** How long a forget waits for the active Cortex worker of another process to apply it. */
const APPLY_WAIT_MS = 30_000;

/**
 * Record the forget in the Cortex's forget journal and wait until the active worker has
 * applied it: it stopped the compile under way, dropped what it held of the namespace, stored
 * its queued compile events and deleted every record quoting the forgotten entries, so that
 * nothing it writes afterwards was read before the forget. True when a worker did; false when
 * none is active (or it did not answer in time), and the caller sweeps again instead.
 */
/** Whether the Cortex in this process finished the work queued so far within `ms`. */
const idleWithin = async (cortex: { idle(): Promise<void> }, ms: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([cortex.idle().then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
};

const cortexApplied = async (deps: ServiceDeps, target: ForgetTarget): Promise<boolean> => {
  let id: string;
  try {
    id = await noteForget(deps.store, target, deps.now());
    // Notices are trimmed here too, in case no worker ever runs to trim them.
    await unapplied(deps.store, deps.now());
  } catch {
    if (deps.cortex) await idleWithin(deps.cortex, APPLY_WAIT_MS);
    return false;
  }
  const embedded = deps.cortex;
  if (embedded && embedded.status().status === 'active') {
    // Told by the change feed, in this process: its queue applies the forget first. Its queue
    // never empties while a compile keeps failing and being retried, so the wait is bounded
    // as for a worker elsewhere; the caller then sweeps again.
    if (!(await idleWithin(embedded, APPLY_WAIT_MS))) return false;
    await markApplied(deps.store, id, target, embedded.status().worker_id ?? 'embedded', deps.now()).catch(() => {});
    return true;
  }
  const { status } = await readSharedStatus(deps.store, deps.now()).catch(() => ({ status: { status: 'stopped' } }));
  if (status.status !== 'active') return false;
  return awaitApplied(deps.store, id, Date.now() + APPLY_WAIT_MS).catch(() => false);
};
