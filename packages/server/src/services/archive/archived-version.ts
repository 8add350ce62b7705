import { z } from 'zod';
import { contentHash } from '../../domain/content-hash.ts';
import type { Entry } from '../../domain/entry.ts';
import { evidenceStatus } from '../../domain/evidence.ts';
import { LIMITS } from '../../domain/limits.ts';
import { AgentIdSchema, EntityPathSchema, EventTypeSchema, KeySchema, NamespaceSchema, TagSchema } from '../../domain/names.ts';
import { valueSizeProblem } from '../../domain/value.ts';
import { ConfidenceSchema, EntrySchema, LinksSchema, MemoryTypeSchema, ProvenanceSchema, ValueSchema } from '../schemas.ts';

/** A time as Cairn writes them: ISO 8601 in UTC (`2026-11-28T06:14:20.000Z`). */
export const Instant = z.iso.datetime({ error: 'expected an ISO 8601 time in UTC' });

/**
 * A version's time exactly as every write stamps it (`toISOString()`: milliseconds, `Z`),
 * for years 0001–9999. The backends keep versions' times differently (the filesystem and S3
 * as text, PostgreSQL as timestamptz, normalized to milliseconds and refusing year 0), so a
 * time of another form would be stored differently on each, and a second import into
 * PostgreSQL would find the version it wrote "different" from the archive's. One form, a real
 * date (it reads back as itself), is held the same everywhere.
 */
const STORED_TIME = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isStoredTime = (t: string): boolean => STORED_TIME.test(t) && !Number.isNaN(Date.parse(t)) && new Date(t).toISOString() === t;
const STORED_TIME_FORM = 'expected an ISO 8601 time in UTC as Cairn writes them (YYYY-MM-DDTHH:MM:SS.sssZ, a real date in years 0001–9999)';
export const StoredInstant = z.string({ error: STORED_TIME_FORM }).refine(isStoredTime, { error: STORED_TIME_FORM });

/** The highest version number every backend holds (PostgreSQL's version column is an integer). */
export const MAX_VERSION = 2_147_483_647;

const Count = z.number().int().min(0);

/**
 * One stored version as an archive carries it: the entry's own schema, with every field a
 * caller writes held to the write rules (names, sizes, nesting, Unicode), and then what the
 * store derives kept consistent (the content hash of the value, the evidence status of its
 * counts). An archive is a way into the store, so it may bring nothing a write could not: a
 * value no backend can hold, or a field a reader would trip over, would otherwise land and
 * break reads and search later.
 */
const ArchivedVersion = EntrySchema.extend({
  namespace: NamespaceSchema,
  entity_path: EntityPathSchema,
  key: KeySchema,
  value: ValueSchema.superRefine((value, ctx) => {
    const problem = valueSizeProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  version: z.number().int().min(1).max(MAX_VERSION, { error: `is above ${MAX_VERSION}, the highest version every backend holds` }),
  confidence: ConfidenceSchema,
  agent_id: AgentIdSchema,
  event_type: EventTypeSchema.nullable(),
  memory_type: MemoryTypeSchema,
  tags: z.array(TagSchema).max(LIMITS.tags),
  provenance: ProvenanceSchema,
  created_at: StoredInstant,
  written_at: StoredInstant,
  expires_at: StoredInstant.nullable(),
  evidence: EntrySchema.shape.evidence.extend({ successes: Count, failures: Count }).strict(),
  links: LinksSchema,
}).strict();

const pathOf = (path: PropertyKey[]): string => path.map(String).join('.');

const hashOfValue = (v: Entry): string | null => (v.content_hash !== contentHash(v.value) ? 'content_hash: does not match the value' : null);

const statusOfCounts = (v: Entry): string | null =>
  v.evidence.status !== evidenceStatus(v.evidence.successes, v.evidence.failures) ? 'evidence: the status does not follow from the counts' : null;

/**
 * An expiry is after the write: ttl_seconds sets it at least a second on, and a version that
 * restates the entry's expiry (an outcome, a link) is written only while the entry is live,
 * before it expires. A version expired when written would never have been readable.
 */
const expiresAfterWritten = (v: Entry): string | null =>
  v.expires_at !== null && Date.parse(v.expires_at) <= Date.parse(v.written_at) ? `expires_at ${v.expires_at} is not after written_at ${v.written_at}` : null;

/**
 * A tombstone is what deleteEntry writes, the same on every backend: the live version with its
 * value emptied ("", hashed as such) and no expiry. A tombstone holding content would show
 * deleted content in the entry's history, and one with an expiry was never written by a delete.
 */
const tombstoneAsDeleted = (v: Entry): string | null => {
  if (!v.deleted) return null;
  if (v.value !== '') return 'value: a deletion (deleted: true) holds no value; a delete writes ""';
  if (v.expires_at !== null) return 'expires_at: a deletion (deleted: true) has no expiry; a delete writes null';
  return null;
};

/**
 * What the store derives or a write stamps, held to what a write makes of it; each answers the
 * field's problem or null. A tombstone first: its value, not a hash made to match it, is the fault.
 */
const DERIVED_RULES = [tombstoneAsDeleted, hashOfValue, statusOfCounts, expiresAfterWritten];

/** Why `version` cannot be imported ("field: reason"), or null. Rules between versions: archived-history.ts. */
export const archivedVersionProblem = (version: unknown): string | null => {
  const parsed = ArchivedVersion.safeParse(version);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    return `${pathOf(issue.path) || 'version'}: ${issue.message}`;
  }
  const v = parsed.data as Entry;
  for (const rule of DERIVED_RULES) {
    const problem = rule(v);
    if (problem) return problem;
  }
  return null;
};
