import { z } from 'zod';
import { EntityPathSchema, KeySchema, NamespaceSchema, NewKeySchema } from '../../domain/names.ts';
import { ConfidenceSchema } from '../../services/schemas.ts';

/**
 * Argument descriptions written for a model. The REST schemas describe fields for a
 * programmer; a model also needs to know what good values look like and how to choose them.
 */

export const entityPath = EntityPathSchema.describe(
  'What the entry is about: a slash-separated path from general to specific, e.g. "repos/acme/api", ' +
    '"incidents/pagerduty/checkout", "projects/jira/OPS", "agents/triage-bot/notes". ' +
    '1–32 segments; no empty, "." or ".." segment; no leading or trailing "/".',
);

export const entityPathPrefix = EntityPathSchema.describe(
  'Only entries at this entity path or below it, segment by segment: "repos/acme" covers ' +
    '"repos/acme/api" but not "repos/acme-corp".',
);

const KEY = 'Which fact about the entity, unique under its entity_path, e.g. "pr-42", "deploy-policy", "owner". May contain "/".';
export const key = KeySchema.describe(KEY);
/** The key of a write: URLs cannot name an entry whose key is "." or "..". */
export const newKey = NewKeySchema.describe(`${KEY} Not "." or "..".`);

export const namespace = NamespaceSchema.optional().describe('Leave out to use the server\'s namespace.');

export const confidence = ConfidenceSchema.describe(
  'How far to trust the entry, 0–1: 1 = verified or from a system of record (the default), ' +
    'about 0.7 = likely, 0.5 or less = a guess to be checked. Readers weigh entries by it.',
);

// A plain string here: the service checks the format, and the ISO regex would cost a model
// hundreds of tokens in every tools/list.
export const since = z.string().describe('Only entries written at or after this time (ISO 8601, e.g. "2026-11-21T10:00:00Z").');

/** The past instant a read, list, search or briefing answers as of; the service checks the format. */
export const asOf = (what: string) =>
  z
    .string()
    .describe(
      `Answer as of this past moment (ISO 8601, e.g. "2026-11-20T09:00:00Z"): ${what}, ignoring everything written later — to see what was known when a decision was made. Not later than now; leave out for the present.`,
    );

export const agentId = z.string().describe('Only entries written by this agent, e.g. "triage-bot" or "external/github" (a connector).');
