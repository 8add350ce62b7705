import { z } from 'zod';
import { EntityPathSchema, KeySchema, NamespaceSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import type { EntryAddress } from '../../domain/entry.ts';
import { recordAudit } from '../audit-log.ts';
import { namespaceFor, requirePath, requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { FreeTextSchema } from '../schemas.ts';
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
  // compile racing the forget may write some again: the second sweep deletes them, after the
  // Cortex in this process (if any) has compiled the namespace again without the entries, and
  // one more compaction takes the bytes its racing writes left.
  let derived_removed = await purgeDerived(deps.store, namespace, input.entity_path);
  // The audit log's content hashes too, before the forget, so that its compaction takes the
  // batches' old bytes; writes racing the forget are scrubbed by the second pass.
  const scrubbedAt = deps.now();
  await scrubAudit(deps, target);
  const forgotten = await deps.store.forget(target);
  if (forgotten.length > 0) {
    await deps.cortex?.idle();
    const late = await purgeDerived(deps.store, namespace, input.entity_path);
    const lateHashes = await scrubAudit(deps, target, scrubbedAt);
    if (late > 0 || lateHashes > 0 || deps.cortex) await deps.store.compact();
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
