import { z } from 'zod';
import { CONNECTORS } from '../../connectors/registry.ts';
import { NamespaceSchema } from '../../domain/names.ts';
import { structureProblem, textProblem } from '../../domain/value.ts';
import { KEYS, KeyRecordSchema } from '../admin/key-records.ts';
import { TeamRecordSchema, teamsCollection } from '../admin/team-records.ts';
import { AuditBatchSchema, auditCollection } from '../audit-log.ts';
import { DeliveryCountsRecordSchema, statsCollection } from '../delivery-counters.ts';
import { DELIVERY_LOGS, DeliveryLineRecordSchema } from '../delivery-log.ts';
import { dedupSchemaOf } from '../retention/dedup-collections.ts';
import { ConnectorRecordSchema, settingsCollection } from '../connector-state.ts';
import { EvidencePointerSchema, evidenceCollection } from '../judged-entries.ts';
import { RETENTION_POLICIES, type RetentionPolicy, RetentionPolicyRecordSchema, policyIds } from '../retention/retention-policies.ts';
import { Instant } from './archived-version.ts';
import { CORTEX_NAMESPACES, isArchivedCollection } from './collections.ts';

/** Longest collection name or record id an archive may bring (S3 keeps both in an object key). */
const MAX_NAME_CHARS = 512;

/**
 * The times the readers of keys and connector settings use, as their writers stamp them
 * (create-key, revoke-key, enable-connector: toISOString): the keys are listed by created_at,
 * and a revoked_at of "" would be read as never revoked.
 */
const ArchivedKeySchema = KeyRecordSchema.extend({ created_at: Instant, revoked_at: Instant.nullable() });
const ArchivedConnectorSchema = ConnectorRecordSchema.extend({ enabled_at: Instant.optional() });

/** Collections whose readers take a record's data as a shape, and that shape. */
const shapeOf = (collection: string): [string, z.ZodType] | null => {
  if (collection === KEYS) return ['API key', ArchivedKeySchema];
  if (collection.startsWith(settingsCollection(''))) return ['connector settings', ArchivedConnectorSchema];
  if (collection.startsWith(teamsCollection(''))) return ['team', TeamRecordSchema];
  if (collection === RETENTION_POLICIES) return ['retention policy', RetentionPolicyRecordSchema];
  if (collection.startsWith(evidenceCollection(''))) return ['evidence pointer', EvidencePointerSchema];
  if (collection.startsWith(auditCollection(''))) return ['audit events', AuditBatchSchema];
  if (collection.startsWith(statsCollection(''))) return ['delivery counts', DeliveryCountsRecordSchema];
  if (collection.startsWith(`${DELIVERY_LOGS}/`)) return ['delivery log line', DeliveryLineRecordSchema];
  const dedup = dedupSchemaOf(collection);
  if (dedup) return ['delivery seen', dedup];
  return null;
};

/**
 * A connector's settings and its delivery counts are kept under its name, and only a built-in
 * connector's (connectorNamed runs before every write of either): one of another name is no
 * connector's, and no export writes it.
 */
const ConnectorName = z.string().refine((name) => CONNECTORS.has(name), { error: `expected a connector's name: ${[...CONNECTORS.keys()].join(', ')}` });

/**
 * Collections whose readers take a record's id as a name, and what it must be: the Cortex
 * compiles each namespace its list names, so each must be one a write could have made; the
 * connectors' settings and counts are each a connector's.
 */
const idShapeOf = (collection: string): [string, z.ZodType] | null => {
  if (collection === CORTEX_NAMESPACES) return ['Cortex namespace', NamespaceSchema];
  if (collection.startsWith(settingsCollection(''))) return ['connector settings', ConnectorName];
  if (collection.startsWith(statsCollection(''))) return ['delivery counts', ConnectorName];
  return null;
};

const nameProblem = (name: string): string | null => {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_NAME_CHARS) return `must be at most ${MAX_NAME_CHARS} characters`;
  return textProblem(name);
};

/**
 * Why a record line cannot be imported, or null: a name no backend keeps alike, data no
 * backend can hold (nesting, U+0000), or records their readers would trip over: API keys,
 * connector settings, teams, retention policies (one held to less could prune history),
 * evidence pointers, audit batches, delivery counts and log lines, deliveries seen, and (by
 * id) the Cortex's namespaces and the connector whose settings or counts a record holds. The
 * ones only read for what their own code stored (what a connector learned) are kept as
 * exported; fields beyond those the readers use are kept too.
 */
export const recordProblem = (collection: string, id: string, data: object): string | null => {
  const named = nameProblem(collection);
  if (named) return `collection ${named}`;
  if (!isArchivedCollection(collection)) return 'collection is not one an export writes';
  const ided = nameProblem(id);
  if (ided) return `id ${ided}`;
  const idShape = idShapeOf(collection);
  const idParsed = idShape?.[1].safeParse(id);
  if (idShape && idParsed && !idParsed.success) return `${idShape[0]}: id: ${(idParsed.error.issues[0] as z.core.$ZodIssue).message}`;
  const shaped = structureProblem(data);
  if (shaped) return `data ${shaped}`;
  const shape = shapeOf(collection);
  const parsed = shape?.[1].safeParse(data);
  if (shape && parsed && !parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    return `${shape[0]}: ${issue.path.map(String).join('.')}: ${issue.message}`;
  }
  // A policy is put and deleted by its id: under another's, it would replace that namespace's.
  if (collection === RETENTION_POLICIES && parsed?.success) {
    const { namespace, entity_path } = parsed.data as RetentionPolicy;
    const ids = policyIds(namespace, entity_path);
    if (!ids.includes(id)) return `retention policy: id: must be ${ids[0]}, its namespace's and path's`;
  }
  return null;
};

/**
 * A record line as an export writes it (export-archive.ts: the stored record's id, data and
 * updated_at, which every backend stamps with toISOString), and nothing beside: as a version
 * may carry no field beyond the entry's (archived-version.ts), a record line carries none
 * beyond these.
 */
const RecordLineSchema = z
  .object({ type: z.literal('record'), collection: z.string(), id: z.string(), data: z.record(z.string(), z.unknown()), updated_at: Instant })
  .strict();

const RECORD_LINE_FIELDS = Object.keys(RecordLineSchema.shape).join(', ');

/** Why a record line's own fields (not its data: recordProblem) cannot be imported, or null. */
export const recordLineProblem = (line: object): string | null => {
  const parsed = RecordLineSchema.safeParse(line);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  if (issue.code === 'unrecognized_keys') return `${issue.message}: a record line holds ${RECORD_LINE_FIELDS} only`;
  return `${issue.path.map(String).join('.')}: ${issue.message}`;
};
