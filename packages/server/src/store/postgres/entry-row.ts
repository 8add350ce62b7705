import type postgres from 'postgres';
import type { Entry } from '../../domain/entry.ts';
import { damagedRow } from './damaged-row.ts';

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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const EVIDENCE_STATUSES: ReadonlySet<unknown> = new Set(['untested', 'validated', 'contested', 'discredited']);

/**
 * What is wrong with the columns of a row that the column types do not already rule out (jsonb
 * holds any JSON, a text[] may hold NULL), or null when nothing is: every backend answers the
 * same shapes, so a row edited or restored into another shape is damage to report, not to
 * serve as something else or to fail on as a TypeError.
 */
const rowProblem = (row: EntryRow): string | null => {
  if (typeof row.value !== 'string' && !isObject(row.value)) return `value is ${JSON.stringify(row.value)}, neither a string nor an object`;
  if (!Array.isArray(row.tags) || !row.tags.every((t) => typeof t === 'string')) return `tags are ${JSON.stringify(row.tags)}, not a list of strings`;
  if (!isObject(row.provenance)) return `provenance is ${JSON.stringify(row.provenance)}, not an object`;
  const e: unknown = row.evidence;
  if (!isObject(e) || !isCount(e.successes) || !isCount(e.failures) || !EVIDENCE_STATUSES.has(e.status)) {
    return `evidence is ${JSON.stringify(e)}, not {successes, failures, status}`;
  }
  const links: unknown = row.links;
  if (!Array.isArray(links)) return `links are ${JSON.stringify(links)}, not a list`;
  const bad = links.find((l) => !isObject(l) || typeof l.entity_path !== 'string' || typeof l.key !== 'string' || typeof l.relation !== 'string');
  if (bad !== undefined) return `a link is ${JSON.stringify(bad)}, not {entity_path, key, relation}`;
  return null;
};

/**
 * Timestamps go in as the ISO strings services produce (`toISOString()`, millisecond
 * precision, UTC) and come back in that same form, so a stored entry reads back deep-equal.
 * jsonb keeps an object's keys in an order of its own (shortest first); evidence and links are
 * put back in the order every other backend answers them, so an answer's bytes do not depend
 * on where it is stored. A row of another shape throws DamagedRowError naming its address.
 */
export const rowToEntry = (row: EntryRow): Entry => {
  const problem = rowProblem(row);
  if (problem !== null) throw damagedRow(row, problem);
  return {
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
    evidence: { successes: row.evidence.successes, failures: row.evidence.failures, status: row.evidence.status },
    links: row.links.map(({ entity_path, key, relation }) => ({ entity_path, key, relation })),
  };
};

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
