import { z } from 'zod';
import { contentHash, canonicalJson } from '../domain/content-hash.ts';
import { type Entry, isLive } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { valueSizeProblem } from '../domain/value.ts';
import { VersionConflict } from '../ports/store.ts';
import { recordAudit } from './audit-log.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import { contentionBackoff } from './backoff.ts';
import type { Context, ServiceDeps } from './context.ts';
import { parseInput } from '../domain/parse-input.ts';
import { AddressSchema, ValueSchema, WriteFieldsSchema } from './schemas.ts';

export const WriteEntryInput = AddressSchema.extend({
  value: ValueSchema,
  ...WriteFieldsSchema,
  if_version: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Write only if the entry is currently at this version (0 = must not exist); otherwise 409.'),
  ttl_seconds: z
    .number()
    .int()
    .min(1)
    .max(10 * 365 * 24 * 3600)
    .optional()
    .describe('Forget the entry this many seconds after this write.'),
}).strict();
export type WriteEntryInput = z.input<typeof WriteEntryInput>;

export interface WriteResult {
  entry: Entry;
  /** False when the write was identical to the current version and stored nothing. */
  created: boolean;
}

/** Retries when another writer takes the version we were about to write. */
const MAX_ATTEMPTS = 16;

/** Same content and metadata: a re-write that should not make a version. */
const sameAs = (a: Entry, b: Entry): boolean =>
  a.content_hash === b.content_hash &&
  a.confidence === b.confidence &&
  a.agent_id === b.agent_id &&
  a.event_type === b.event_type &&
  a.memory_type === b.memory_type &&
  a.shared === b.shared &&
  a.expires_at === b.expires_at &&
  canonicalJson(a.tags) === canonicalJson(b.tags) &&
  canonicalJson(a.provenance) === canonicalJson(b.provenance);

/**
 * Write a new version of an entry, or nothing when it is unchanged. With `if_version` the
 * write is a compare-and-set (409 on mismatch); without it, a lost race retries on top of
 * the winner so that concurrent writers never lose a version.
 */
export const writeEntry = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<WriteResult> => {
  const input = parseInput(WriteEntryInput, raw);
  requireScope(ctx, 'write');
  const namespace = namespaceFor(ctx, input.namespace);
  requirePath(ctx, input.entity_path);
  const tooLarge = valueSizeProblem(input.value);
  if (tooLarge) throw new ServiceError('PAYLOAD_TOO_LARGE', `value ${tooLarge}`, { details: [{ field: 'value', message: tooLarge }] });
  const address = { namespace, entity_path: input.entity_path, key: input.key };
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 1) await contentionBackoff(attempt);
    const head = await deps.store.head(address);
    const now = deps.now();
    const live = head !== null && isLive(head, now);
    const liveVersion = live ? head.version : 0;
    if (input.if_version !== undefined && input.if_version !== liveVersion) {
      throw new ServiceError('CONFLICT', `entry is at version ${liveVersion}, not ${input.if_version}`);
    }
    const written = new Date(now).toISOString();
    const candidate: Entry = {
      ...address,
      value: input.value,
      version: (head?.version ?? 0) + 1,
      confidence: input.confidence ?? 1,
      agent_id: input.agent_id ?? ctx.agentId,
      event_type: input.event_type ?? null,
      memory_type: input.memory_type ?? 'fact',
      shared: input.shared ?? false,
      tags: input.tags ?? [],
      provenance: input.provenance ?? {},
      content_hash: contentHash(input.value),
      created_at: live ? head.created_at : written,
      written_at: written,
      expires_at: input.ttl_seconds === undefined ? null : new Date(now + input.ttl_seconds * 1000).toISOString(),
      deleted: false,
    };
    if (live && sameAs(head, candidate)) return { entry: head, created: false };
    try {
      await deps.store.append(candidate, head?.version ?? 0);
      // Not awaited: the version itself is the durable record of the write, and waiting for
      // the audit batch would put a second storage round trip on every write.
      void recordAudit(deps, ctx, namespace, {
        action: 'entry.written',
        target: { entity_path: candidate.entity_path, key: candidate.key },
        changes: { version: candidate.version, content_hash: candidate.content_hash, agent_id: candidate.agent_id },
      }).catch(() => {});
      return { entry: candidate, created: true };
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      if (input.if_version !== undefined) throw new ServiceError('CONFLICT', `entry was changed concurrently (now at version ${error.actual})`);
    }
  }
  throw new ServiceError('CONFLICT', 'entry is being written by too many writers at once; retry');
};
