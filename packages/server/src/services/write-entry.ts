import type { SimilarEntry } from 'cairn-memory-client';
import { z } from 'zod';
import { canonicalJson, contentHashOf } from '../domain/content-hash.ts';
import type { Entry, EntryAddress } from '../domain/entry.ts';
import { type Evidence, UNTESTED } from '../domain/evidence.ts';
import { ServiceError } from '../domain/errors.ts';
import { NewKeySchema } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import { valueSizeProblem } from '../domain/value.ts';
import { type AppendDecision, type Appended, type HeadView, appendVersion } from './append-version.ts';
import { recordAudit } from './audit-log.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { AddressSchema, ValueSchema, WriteFieldsSchema } from './schemas.ts';
import { SimilarSchema, similarEntries } from './similar-entries.ts';

export const WriteEntryInput = AddressSchema.extend({
  key: NewKeySchema,
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
  similar: SimilarSchema.optional(),
}).strict();
export type WriteEntryInput = z.input<typeof WriteEntryInput>;
type WriteData = z.output<typeof WriteEntryInput>;
const TargetInput = AddressSchema.strict();

/**
 * `created` is false when the write was identical to the current version and stored nothing;
 * `similar` is there when the write asked for near duplicates.
 */
export type WriteResult = Appended & { similar?: SimilarEntry[] };

/**
 * What a read-modify-write derives from the current version: a write's fields without its
 * address, and (outcomes only) the entry's new evidence and the instant it expires, which no
 * caller can write directly: an outcome keeps the expiry the entry has (a `ttl_seconds` counts
 * from its own write, so an outcome's would move it later each time).
 */
export type DerivedWrite = Omit<WriteEntryInput, 'namespace' | 'entity_path' | 'key' | 'if_version' | 'similar'> & {
  evidence?: Evidence;
  expires_at?: string | null;
};

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
  canonicalJson(a.provenance) === canonicalJson(b.provenance) &&
  canonicalJson(a.evidence) === canonicalJson(b.evidence) &&
  canonicalJson(a.links) === canonicalJson(b.links);

/**
 * Write a new version of an entry, or nothing when it is unchanged. With `if_version` the
 * write is a compare-and-set (409 on mismatch); without it, a lost race retries on top of
 * the winner (appendVersion) so that concurrent writers never lose a version.
 */
export const writeEntry = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<WriteResult> => {
  const input = parseInput(WriteEntryInput, raw);
  requireScope(ctx, 'write');
  // `similar` answers other entries, values and all: a key that may only write may not read
  // them that way either. Refused before anything is written.
  if (input.similar) requireScope(ctx, 'read');
  const namespace = namespaceFor(ctx, input.namespace);
  requirePath(ctx, input.entity_path);
  const hash = requireStorableValue(input.value);
  requireLinkTargets(ctx, input.links);
  const address = { namespace, entity_path: input.entity_path, key: input.key };
  const result = audited(deps, ctx, await appendVersion(deps, address, (view) => nextVersion(ctx, address, input, view, hash), { ifVersion: input.if_version }));
  // After the write: it is stored whatever the lookup finds, and costs nothing unless asked for.
  const similar = input.similar ? await similarEntries(deps, ctx, result.entry, input.similar) : undefined;
  return similar === undefined ? result : { ...result, similar };
};

/**
 * A read-modify-write of one entry (a connector's incident timeline, an outcome's
 * confidence): `derive` builds the write from the entry's live version (null when absent,
 * deleted or expired) on every attempt, so a write that lost a race is re-derived from the
 * winner instead of overwriting it. Each derived write is validated like a request body;
 * `derive` returns null to store nothing (answering the live version) and may throw a
 * ServiceError to refuse.
 */
export const writeDerived = async (
  deps: ServiceDeps,
  ctx: Context,
  target: { namespace?: string; entity_path: string; key: string },
  derive: (current: Entry | null) => DerivedWrite | null,
): Promise<WriteResult> => {
  const at = parseInput(TargetInput, target);
  requireScope(ctx, 'write');
  const namespace = namespaceFor(ctx, at.namespace);
  requirePath(ctx, at.entity_path);
  const address = { namespace, entity_path: at.entity_path, key: at.key };
  const result = await appendVersion(deps, address, (view) => derivedDecision(ctx, address, view, derive));
  return audited(deps, ctx, result);
};

/**
 * One attempt of a derived write (see writeDerived) on the head it read, at `address` (the
 * caller has checked its scope and path): the fields `derive` makes, validated like a request
 * body. Shared by writes of several entries at once that must all land or none (outcomes).
 */
export const derivedDecision = (ctx: Context, address: EntryAddress, view: HeadView, derive: (current: Entry | null) => DerivedWrite | null): AppendDecision => {
  const fields = derive(view.live);
  if (fields === null) {
    if (!view.live) throw new Error('writeDerived: nothing to write and nothing written before');
    return { kind: 'unchanged', entry: view.live };
  }
  const { evidence, expires_at, ...write } = fields;
  const input = parseInput(WriteEntryInput, { ...write, ...address });
  const hash = requireStorableValue(input.value);
  // Links the entry already has are not the caller's doing: an outcome carries the head's
  // links, which the Cortex may have pointed beyond a confined key's prefixes (a chat thread
  // to the incident it discusses), and the key's outcome on its own entry was refused for them.
  requireLinkTargets(ctx, addedLinks(input.links, view.live?.links));
  return nextVersion(ctx, address, input, view, hash, { evidence, expires_at });
};

/** The links of `links` that `had` lacks. */
const addedLinks = <L extends { entity_path: string; key: string; relation?: string }>(links: readonly L[] | undefined, had: readonly L[] | undefined): L[] => {
  const id = (l: L): string => JSON.stringify([l.entity_path, l.key, l.relation ?? null]);
  const known = new Set((had ?? []).map(id));
  return (links ?? []).filter((l) => !known.has(id(l)));
};

/** A key confined to some prefixes may only point inside them, as it may only write inside them. */
export const requireLinkTargets = (ctx: Context, links: readonly { entity_path: string }[] | undefined): void => {
  for (const link of links ?? []) requirePath(ctx, link.entity_path);
};

/**
 * Refuse a value too large to store, naming it as `field` (a batch names its item); returns
 * its content hash. The value's canonical JSON is worked out here once per write, for both,
 * and not again when a lost race retries.
 */
export const requireStorableValue = (value: unknown, field = 'value'): string => {
  const canonical = canonicalJson(value);
  const tooLarge = valueSizeProblem(value, canonical);
  if (tooLarge) throw new ServiceError('PAYLOAD_TOO_LARGE', `${field} ${tooLarge}`, { details: [{ field, message: tooLarge }] });
  return contentHashOf(canonical);
};

/**
 * The version `input` makes on top of the head that was read; unchanged when it repeats the
 * live one. `hash` is the value's content hash (from requireStorableValue).
 */
export const nextVersion = (
  ctx: Context,
  address: EntryAddress,
  input: WriteData,
  { head, live, now }: HeadView,
  hash: string,
  derived: Pick<DerivedWrite, 'evidence' | 'expires_at'> = {},
): AppendDecision => {
  const { evidence, expires_at } = derived;
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
    content_hash: hash,
    created_at: live ? live.created_at : written,
    written_at: written,
    expires_at: expires_at !== undefined ? expires_at : input.ttl_seconds === undefined ? null : new Date(now + input.ttl_seconds * 1000).toISOString(),
    deleted: false,
    // Outcomes judged this content; a new value has to earn its own.
    evidence: evidence ?? (live && live.content_hash === hash ? (live.evidence ?? UNTESTED) : UNTESTED),
    links: input.links ?? [],
  };
  return live && sameAs(live, candidate) ? { kind: 'unchanged', entry: live } : { kind: 'append', entry: candidate };
};

export const audited = (deps: ServiceDeps, ctx: Context, result: WriteResult): WriteResult => {
  const { entry, created } = result;
  // Not awaited: the version itself is the durable record of the write, and waiting for
  // the audit batch would put a second storage round trip on every write.
  if (created) {
    void recordAudit(deps, ctx, entry.namespace, {
      action: 'entry.written',
      target: { entity_path: entry.entity_path, key: entry.key },
      changes: { version: entry.version, content_hash: entry.content_hash, agent_id: entry.agent_id },
    }).catch(() => {});
  }
  return result;
};
