import { z } from 'zod';
import { SCOPES } from '../../domain/access.ts';
import { EntityPathSchema, NamespaceSchema } from '../../domain/names.ts';
import { structureProblem, textProblem } from '../../domain/value.ts';
import { KEYS } from '../admin/key-records.ts';
import { settingsCollection } from '../connector-state.ts';

/** Longest collection name or record id an archive may bring (S3 keeps both in an object key). */
const MAX_NAME_CHARS = 512;

/**
 * A connector's settings as connector-state.ts reads them: a switch, its signing secret (plain,
 * or sealed with CAIRN_SECRET_KEY), and the connector's own lists.
 */
const ConnectorSettings = z.object({
  enabled: z.boolean().optional(),
  secret: z.union([z.string(), z.object({ alg: z.literal('A256GCM'), kid: z.string(), iv: z.string(), tag: z.string(), ct: z.string() })]).optional(),
  enabled_at: z.string().optional(),
  channels: z.array(z.string()).optional(),
  projects: z.record(z.string(), z.string()).optional(),
});

/** A managed key as the key resolver reads it (key-records.ts): its SHA-256, scopes and bounds. */
const KeyRecord = z.object({
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)).min(1),
  prefixes: z.array(EntityPathSchema).nullable(),
  namespace: NamespaceSchema,
  team: z.string().nullable(),
  hash: z.string().regex(/^[0-9a-f]{64}$/, { error: 'expected a SHA-256 in hex' }),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
});

/** Collections whose readers take a record's data as a shape, and that shape. */
const shapeOf = (collection: string): [string, z.ZodType] | null => {
  if (collection === KEYS) return ['API key', KeyRecord];
  if (collection.startsWith(settingsCollection(''))) return ['connector settings', ConnectorSettings];
  return null;
};

const nameProblem = (name: string): string | null => {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_NAME_CHARS) return `must be at most ${MAX_NAME_CHARS} characters`;
  return textProblem(name);
};

/**
 * Why a record line cannot be imported, or null: a name no backend keeps alike, data no
 * backend can hold (nesting, U+0000), or API keys and connector settings their readers would
 * trip over. Other collections' data is kept as exported.
 */
export const recordProblem = (collection: string, id: string, data: object): string | null => {
  const named = nameProblem(collection);
  if (named) return `collection ${named}`;
  const ided = nameProblem(id);
  if (ided) return `id ${ided}`;
  const shaped = structureProblem(data);
  if (shaped) return `data ${shaped}`;
  const shape = shapeOf(collection);
  const parsed = shape?.[1].safeParse(data);
  if (shape && parsed && !parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    return `${shape[0]}: ${issue.path.map(String).join('.')}: ${issue.message}`;
  }
  return null;
};
