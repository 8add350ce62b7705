import { z } from 'zod';
import { LIMITS } from '../domain/limits.ts';
import { structureProblem, textProblem } from '../domain/value.ts';
import { AgentIdSchema, EntityPathSchema, EventTypeSchema, KeySchema, NamespaceSchema, TagSchema } from '../domain/names.ts';

/** Schemas shared by several operations; each operation's own input lives in its file. */

/**
 * A whole number that may arrive as query-string text ("20") or as a JSON number (bodies, MCP
 * tools). Only digit text is converted: `z.coerce` would also take `true` as 1 and `""` or
 * `null` as 0, so a mistyped argument would act instead of being refused.
 */
export const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^\s*-?\d{1,16}\s*$/.test(v) ? Number(v) : v),
    // The type's own error would also stand for the range checks: "expected a whole number"
    // for `limit=0`, which is one. Each check says its own rule.
    z
      .number({ error: (issue) => (issue.code === 'invalid_type' ? 'expected a whole number' : undefined) })
      .int({ error: 'expected a whole number' })
      .min(min, { error: `must be at least ${min}` })
      .max(max, { error: `must be at most ${max}` }),
  );

/** Refuses documents nested too deep or holding U+0000 (see structureProblem), as the field's own error. */
const wellFormed = (doc: unknown, ctx: z.RefinementCtx): void => {
  const problem = structureProblem(doc);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
};

/** Free text up to `max` characters (a reason, a note): any characters every backend can store. */
/**
 * An instant a request names (`since`, `as_of`): ISO 8601 with an offset, from the year 1 to
 * 9999 in UTC. The format takes year 0000, and 9999-12-31T23:30:00-01:00 (the year 10000 in
 * UTC, which toISOString writes `+010000-…`): PostgreSQL has a value for neither (it refused
 * the query, naming no field, where the other backends answered). Nothing is written outside them.
 */
export const InstantParamSchema = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date and time with an offset, e.g. 2026-11-20T09:00:00Z' })
  // Text that is no instant at all ("yesterday") was already refused by the format: the year
  // checks would add two more errors about a year it does not have.
  .refine((value) => !(Date.parse(value) < YEAR_ONE), { error: 'must be in the year 1 or later' })
  .refine((value) => !(Date.parse(value) >= YEAR_TEN_THOUSAND), { error: 'must be before the year 10000 (UTC)' });
const YEAR_ONE = Date.parse('0001-01-01T00:00:00Z');
const YEAR_TEN_THOUSAND = Date.parse('+010000-01-01T00:00:00Z');

export const FreeTextSchema = (max: number) =>
  z
    .string()
    .max(max)
    .superRefine((s, ctx) => {
      const problem = textProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

export const ValueSchema = z
  .union([z.string(), z.record(z.string(), z.unknown())])
  .superRefine(wellFormed)
  .describe('The content: a plain string, or a JSON object (not an array or a number).');

export const ProvenanceSchema = z
  .record(z.string(), z.unknown())
  .superRefine((doc, ctx) => {
    // Sized only once known to be well formed: a document nested past the bound would
    // overflow the stack of JSON.stringify.
    const problem = structureProblem(doc);
    if (problem) return void ctx.addIssue({ code: 'custom', message: problem });
    const bytes = Buffer.byteLength(JSON.stringify(doc));
    if (bytes > LIMITS.provenanceBytes) ctx.addIssue({ code: 'custom', message: `is ${bytes} bytes of JSON; at most ${LIMITS.provenanceBytes / 1024} KiB` });
  })
  .describe('Where this came from (connector, delivery id, URL, …); at most 64 KiB of JSON.');

export const ConfidenceSchema = z
  .number()
  .min(0)
  .max(1)
  .describe('How much to trust this entry, from 0 (a guess) to 1 (system of record).');

export const MemoryTypeSchema = z
  .string()
  // One error for an empty one (as other names say it), not a length and a pattern error both.
  .min(1, { error: 'must not be empty', abort: true })
  .max(64)
  .regex(/^[a-z][a-z0-9_-]*$/, { error: 'expected a lower-case word such as "fact", "decision", "observation"' })
  .describe('Kind of memory: "fact" (default), "decision", "observation", …');

/** Links per version: enough for an incident's causes and follow-ups, small enough to walk. */
export const MAX_LINKS = 32;

export const LinkSchema = z
  .object({
    entity_path: EntityPathSchema,
    key: KeySchema,
    relation: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[a-z][a-z0-9_.-]*$/, { error: 'expected a lower-case label such as "caused_by", "supersedes", "see_also"' })
      .describe('How this entry relates to the other: "caused_by", "supersedes", "see_also", or your own lower-case label.'),
  })
  .strict();

export const LinksSchema = z
  .array(LinkSchema)
  .max(MAX_LINKS)
  .describe(`Related entries in the same namespace (at most ${MAX_LINKS}), each with a relation label; walk them with /api/v1/neighbours.`);

export const AddressSchema = z.object({
  namespace: NamespaceSchema.optional(),
  entity_path: EntityPathSchema,
  key: KeySchema,
});

export const EntrySchema = z
  .object({
    namespace: z.string(),
    entity_path: z.string(),
    key: z.string(),
    value: ValueSchema,
    version: z.number().int(),
    confidence: z.number(),
    agent_id: z.string(),
    event_type: z.string().nullable(),
    memory_type: z.string(),
    shared: z.boolean(),
    tags: z.array(z.string()),
    provenance: z.record(z.string(), z.unknown()),
    content_hash: z.string(),
    created_at: z.string(),
    written_at: z.string(),
    expires_at: z.string().nullable(),
    deleted: z.boolean(),
    links: z.array(z.object({ entity_path: z.string(), key: z.string(), relation: z.string() })),
    evidence: z
      .object({ successes: z.number().int(), failures: z.number().int(), status: z.enum(['untested', 'validated', 'contested', 'discredited']) })
      .describe('Outcomes recorded against this content and what they make of it (see the README, "Evidence").'),
  })
  .meta({ id: 'Entry', description: 'One version of a memory entry (SPEC §3).' });

export const WriteFieldsSchema = {
  confidence: ConfidenceSchema.optional(),
  agent_id: AgentIdSchema.optional(),
  event_type: EventTypeSchema.nullable().optional(),
  memory_type: MemoryTypeSchema.optional(),
  shared: z.boolean().optional(),
  tags: z.array(TagSchema).max(LIMITS.tags).optional(),
  provenance: ProvenanceSchema.optional(),
  links: LinksSchema.optional(),
};
