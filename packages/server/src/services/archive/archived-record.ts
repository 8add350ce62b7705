import { z } from 'zod';
import { structureProblem, textProblem } from '../../domain/value.ts';
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

const nameProblem = (name: string): string | null => {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_NAME_CHARS) return `must be at most ${MAX_NAME_CHARS} characters`;
  return textProblem(name);
};

/**
 * Why a record line cannot be imported, or null: a name no backend keeps alike, data no
 * backend can hold (nesting, U+0000), or connector settings their reader would trip over.
 * Other collections' data is kept as exported: their readers take what a store gives them.
 */
export const recordProblem = (collection: string, id: string, data: object): string | null => {
  const named = nameProblem(collection);
  if (named) return `collection ${named}`;
  const ided = nameProblem(id);
  if (ided) return `id ${ided}`;
  const shaped = structureProblem(data);
  if (shaped) return `data ${shaped}`;
  if (collection.startsWith(settingsCollection(''))) {
    const parsed = ConnectorSettings.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0] as z.core.$ZodIssue;
      return `connector settings: ${issue.path.map(String).join('.')}: ${issue.message}`;
    }
  }
  return null;
};
