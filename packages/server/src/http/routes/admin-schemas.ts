import type { AuditPage, ForgetResult, IssuedKey, ManagedKey, RetentionPolicy, RetentionRun, TeamRecord } from 'cairn-memory-client';
import { z } from 'zod';
import { SCOPES } from '../../domain/access.ts';
import type { Expect, SameUnion } from '../../domain/type-checks.ts';

/**
 * Response shapes of the admin routes (keys, teams, audit, forget, retention), for the OpenAPI
 * document: the client's ManagedKey, IssuedKey, TeamRecord, AuditPage, ForgetResult,
 * RetentionPolicy and RetentionRun.
 */

export const ManagedKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    prefixes: z.array(z.string()).nullable().describe('Entity-path prefixes the key is confined to; null = every path.'),
    namespace: z.string(),
    team: z.string().nullable(),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
  })
  .meta({ id: 'ManagedKey', description: 'A managed key as listed: never its secret.' });

export const IssuedKeySchema = ManagedKeySchema.extend({
  key: z.string().describe('The key itself (ck_<id>_<secret>): shown in this answer only.'),
}).meta({ id: 'IssuedKey' });

export const KeyListSchema = z.object({ keys: z.array(ManagedKeySchema).describe('Oldest first.') });

export const TeamSchema = z
  .object({
    name: z.string(),
    members: z.array(z.string()).describe('Agent ids or people (free-form identities).'),
    created_at: z.string(),
  })
  .meta({ id: 'Team' });

export const TeamListSchema = z.object({ teams: z.array(TeamSchema) });

export const AuditEventSchema = z
  .object({
    at: z.string(),
    action: z.string().describe('e.g. entry.written, key.created, connector.enabled.'),
    actor: z.object({ key_id: z.string().nullable(), agent_id: z.string() }),
    request_id: z.string(),
    target: z.record(z.string(), z.unknown()).describe('What was acted on: an entry address, a key id, a connector, a team.'),
    changes: z.record(z.string(), z.unknown()).optional().describe('What changed; never a secret.'),
  })
  .meta({ id: 'AuditEvent' });

export const AuditPageSchema = z.object({
  events: z.array(AuditEventSchema).describe('Newest first.'),
  next_cursor: z.string().nullable(),
});

export const ForgetResultSchema = z.object({
  forgotten: z
    .array(z.object({ namespace: z.string(), entity_path: z.string(), key: z.string() }))
    .describe('The entries removed with all their versions (none: nothing matched).'),
  derived_removed: z.number().int().describe('Cortex records (digests, patterns, traces, compile events) removed with them.'),
});

export const RetentionPolicySchema = z
  .object({
    namespace: z.string(),
    entity_path: z.string().nullable().describe('null: the whole namespace.'),
    keep_versions: z.number().int().nullable(),
    keep_days: z.number().nullable(),
    updated_at: z.string(),
  })
  .meta({ id: 'RetentionPolicy' });

export const RetentionPolicyListSchema = z.object({ policies: z.array(RetentionPolicySchema) });

export const RetentionRunSchema = z.object({
  entries_checked: z.number().int().describe('Entries a policy covers that have more than one version.'),
  versions_dropped: z.number().int(),
  dedup_expired: z.number().int(),
  audit_expired: z.number().int().describe('Audit batches older than CAIRN_AUDIT_RETENTION_DAYS (0 when that is 0, keep all).'),
  compaction: z
    .object({ bytesBefore: z.number().nullable(), bytesAfter: z.number().nullable(), ms: z.number() })
    .nullable()
    .describe('The compaction that reclaimed the dropped versions\' space; null when none was dropped. Bytes are null where the backend cannot tell.'),
  ms: z.number(),
});

// What is documented is what the client reads: a field added to one and not the other is a type error.
type _Documented = [
  Expect<SameUnion<z.output<typeof ManagedKeySchema>, ManagedKey>>,
  Expect<SameUnion<z.output<typeof IssuedKeySchema>, IssuedKey>>,
  Expect<SameUnion<z.output<typeof TeamSchema>, TeamRecord>>,
  Expect<SameUnion<z.output<typeof AuditPageSchema>, AuditPage>>,
  Expect<SameUnion<z.output<typeof ForgetResultSchema>, ForgetResult>>,
  Expect<SameUnion<z.output<typeof RetentionPolicySchema>, RetentionPolicy>>,
  Expect<SameUnion<z.output<typeof RetentionRunSchema>, RetentionRun>>,
];

/** A 204 answer: no body. */
export const NoContent = (description: string) => z.null().describe(description);
