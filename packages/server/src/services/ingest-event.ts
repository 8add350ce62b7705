import { eventDedupCollection, noteDedupCollection } from './retention/dedup-collections.ts';
import type { EventResponse } from 'cairn-memory-client';
import { z } from 'zod';
import { canonicalJson, contentHash, sha256 } from '../domain/content-hash.ts';
import type { Entry, EntryAddress } from '../domain/entry.ts';
import { LIMITS } from '../domain/limits.ts';
import { EntityPathSchema, EventTypeSchema, NewKeySchema, TagSchema, labelSchema } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import { requirePath, requireScope } from './authorize.ts';
import { claimOnce, completeClaim, releaseClaim } from './claim-once.ts';
import type { Context, ServiceDeps } from './context.ts';
import { deliverWrites } from './deliver-writes.ts';
import { ConfidenceSchema, ValueSchema } from './schemas.ts';

export const IngestEventInput = z
  .object({
    source: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, { error: 'expected a lower-case name such as "datadog" (letters, digits, ".", "_", "-")' })
      .describe('The sending system; entries are written by agent "external/<source>".'),
    entity_path: EntityPathSchema,
    key: NewKeySchema,
    value: ValueSchema,
    event_type: EventTypeSchema,
    event_id: labelSchema(256, 'The sender\'s id for this event; replays with the same id are duplicates.').optional(),
    confidence: ConfidenceSchema.optional().describe('Default 0.9.'),
    tags: z.array(TagSchema).max(LIMITS.tags).optional(),
  })
  .strict();

/** What POST /api/v1/events answers (declared once, in the client). */
export type IngestEventResult = EventResponse;

/**
 * The version a seen event made (or found unchanged), for the answer to a replay: while it is
 * stored and is still that version, else null. After a forget the same number may be another
 * writer's version (the address written again starts at 1), which the replay must not answer.
 * The dedup record keeps the version's written_at; a record an earlier release wrote keeps
 * only its number, and then the version must be the source's and hold the event's content.
 */
const eventVersion = async (deps: ServiceDeps, address: EntryAddress, source: string, seen: Record<string, unknown>, valueHash: string): Promise<Entry | null> => {
  const version = await deps.store.version(address, Number(seen.version));
  if (version === null || version.agent_id !== `external/${source}`) return null;
  if (typeof seen.written_at === 'string') return Date.parse(version.written_at) === Date.parse(seen.written_at) ? version : null;
  return version.content_hash === valueHash ? version : null;
};

/**
 * An event from any system, stored as a shared entry. Deduplicated by `event_id`, or without
 * one by a hash of its content, so a sender's retry never makes a second version.
 */
export const ingestEvent = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<IngestEventResult> => {
  const input = parseInput(IngestEventInput, raw);
  requireScope(ctx, 'write');
  requirePath(ctx, input.entity_path);
  const address = { namespace: ctx.namespace, entity_path: input.entity_path, key: input.key };
  const collection = eventDedupCollection(ctx.namespace, input.source);
  // An event id names one event at one address: the address is part of the record's id, so a
  // key confined to some paths can neither take an id another writer's event uses elsewhere
  // (that event, when it came, was answered "duplicate" and dropped) nor test which ids were
  // used there. Records a release before this one wrote (`id:<event_id>`) still count.
  // Every event id is hashed with its address (SHA-256), so an id of any allowed length (256)
  // is deduplicated by id; only the legacy lookup keeps the old 200-character bound.
  const named = input.event_id !== undefined;
  const id = named
    ? `at:${sha256(canonicalJson([input.event_id, input.entity_path, input.key]))}`
    : `sha256:${sha256(canonicalJson([input.event_id ?? null, input.entity_path, input.key, input.event_type, input.value]))}`;
  const legacyId = named && (input.event_id as string).length <= 200 ? `id:${input.event_id}` : null;

  // A replay writes nothing, whatever became of the version the event made: written again
  // after retention dropped that version, it rolled the entry back to the event's (stale)
  // content, and after a forget it brought the forgotten entry back. The answer carries that
  // version while it is stored, else null (not the entry's newest version: a write-only key
  // would read what others wrote).
  const tags = input.tags ?? [];
  const valueHash = contentHash(input.value);
  const duplicateOf = async (data: Record<string, unknown>): Promise<IngestEventResult> => ({
    status: 'duplicate',
    entry: await eventVersion(deps, address, input.source, data, valueHash),
  });
  const legacy = legacyId === null ? null : await deps.store.getRecord(collection, legacyId);
  if (legacy) return duplicateOf(legacy.data);

  // Claimed before writing, so concurrent deliveries of one event write it once (claim-once.ts).
  await noteDedupCollection(deps.store, collection);
  const { claim, seen } = await claimOnce(deps.store, deps.now, collection, id);
  if (seen) return duplicateOf(seen);

  // The same content as the current version, from the same source: unchanged, whatever the
  // event's own id (§5). A confidence the event leaves out is not a change: outcomes may have
  // moved the current one.
  const repeats = (current: Entry): boolean =>
    current.content_hash === valueHash &&
    current.event_type === input.event_type &&
    current.agent_id === `external/${input.source}` &&
    current.tags.length === tags.length &&
    current.tags.every((tag, i) => tag === tags[i]) &&
    (input.confidence === undefined || input.confidence === current.confidence);
  let written;
  try {
    [written] = await deliverWrites(deps, ctx, input.source, input.event_id ? { event_id: input.event_id } : {}, [
      { entity_path: input.entity_path, key: input.key, value: input.value, event_type: input.event_type, confidence: input.confidence ?? 0.9, tags, repeats },
    ]);
  } catch (error) {
    await releaseClaim(deps.store, claim);
    throw error;
  }
  const { entry, created } = written as { entry: Entry; created: boolean };
  // The version's written_at too: the number alone names another version once the entry was
  // forgotten and written again (eventVersion).
  await completeClaim(deps.store, claim, { version: entry.version, written_at: entry.written_at, at: new Date(deps.now()).toISOString() });
  return { status: created ? 'created' : 'unchanged', entry };
};
