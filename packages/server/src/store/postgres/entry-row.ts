import type postgres from 'postgres';
import type { Entry } from '../../domain/entry.ts';

/** The versions columns that make up an Entry, in the order `entryParams` fills them. */
export const ENTRY_COLUMNS = [
  'namespace', 'entity_path', 'key', 'version', 'value', 'confidence', 'agent_id', 'event_type',
  'memory_type', 'shared', 'tags', 'provenance', 'content_hash', 'created_at', 'written_at',
  'expires_at', 'deleted', 'evidence', 'links',
] as const;

/**
 * `v.namespace, v.entity_path, …` for a select over cairn_versions aliased as `alias`. Tags
 * are read as jsonb because the driver does not parse arrays (see client.ts).
 */
export const selectEntryColumns = (alias: string): string =>
  ENTRY_COLUMNS.map((c) => (c === 'tags' ? `to_jsonb(${alias}.tags) as tags` : `${alias}.${c}`)).join(', ');

/** A text[] literal: every element quoted, so commas, braces, spaces and NULL stay text. */
export const textArrayLiteral = (items: readonly string[]): string =>
  `{${items.map((t) => `"${t.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;

/** A row of `selectEntryColumns` as the driver returns it: jsonb parsed, timestamptz as Date. */
export type EntryRow = Omit<Entry, 'created_at' | 'written_at' | 'expires_at'> & {
  created_at: Date;
  written_at: Date;
  expires_at: Date | null;
};

/**
 * Timestamps go in as the ISO strings services produce (`toISOString()`, millisecond
 * precision, UTC) and come back in that same form, so a stored entry reads back deep-equal.
 * jsonb keeps an object's keys in an order of its own (shortest first); evidence and links are
 * put back in the order every other backend answers them, so an answer's bytes do not depend
 * on where it is stored.
 */
export const rowToEntry = (row: EntryRow): Entry => ({
  namespace: row.namespace,
  entity_path: row.entity_path,
  key: row.key,
  value: row.value,
  version: row.version,
  confidence: row.confidence,
  agent_id: row.agent_id,
  event_type: row.event_type,
  memory_type: row.memory_type,
  shared: row.shared,
  tags: row.tags,
  provenance: row.provenance,
  content_hash: row.content_hash,
  created_at: row.created_at.toISOString(),
  written_at: row.written_at.toISOString(),
  expires_at: row.expires_at === null ? null : row.expires_at.toISOString(),
  deleted: row.deleted,
  evidence: row.evidence && { successes: row.evidence.successes, failures: row.evidence.failures, status: row.evidence.status },
  links: row.links && row.links.map(({ entity_path, key, relation }) => ({ entity_path, key, relation })),
});

/**
 * Parameter values in ENTRY_COLUMNS order. The driver serializes each by the type the server
 * reports for it (statements are prepared and described first): objects and strings bound to
 * jsonb go through JSON.stringify, so a string value becomes a jsonb string. Tags go as a
 * text[] literal, which the driver passes through untouched.
 */
export const entryParams = (e: Entry): postgres.ParameterOrJSON<never>[] => [
  e.namespace,
  e.entity_path,
  e.key,
  e.version,
  e.value as postgres.JSONValue,
  e.confidence,
  e.agent_id,
  e.event_type,
  e.memory_type,
  e.shared,
  textArrayLiteral(e.tags),
  e.provenance as postgres.JSONValue,
  e.content_hash,
  e.created_at,
  e.written_at,
  e.expires_at,
  e.deleted,
  e.evidence as unknown as postgres.JSONValue,
  e.links as unknown as postgres.JSONValue,
];

/** SQL casts per column, so parameters in a SELECT list get the types of the target columns. */
export const ENTRY_CASTS: Readonly<Record<(typeof ENTRY_COLUMNS)[number], string>> = {
  namespace: 'text', entity_path: 'text', key: 'text', version: 'int4', value: 'jsonb',
  confidence: 'float8', agent_id: 'text', event_type: 'text', memory_type: 'text',
  shared: 'bool', tags: 'text[]', provenance: 'jsonb', content_hash: 'text',
  created_at: 'timestamptz', written_at: 'timestamptz', expires_at: 'timestamptz', deleted: 'bool', evidence: 'jsonb', links: 'jsonb',
};
