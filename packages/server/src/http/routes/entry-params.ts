import { z } from 'zod';

/** How `/<entity_path>/<key>` routes are documented (they match with `*`; see entry-url.ts). */
export const EntryParams = z.object({
  entity_path: z.string().describe('Slash-separated entity path, e.g. repos/acme/api (its "/" are not encoded).'),
  key: z.string().describe('The key, percent-encoded (a "/" in it as %2F).'),
});
