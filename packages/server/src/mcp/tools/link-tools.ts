import { z } from 'zod';
import { NeighboursInput } from '../../services/entry-neighbours.ts';
import { READ_ONLY, type ToolDefinition } from '../tool.ts';
import { entityPath, key, namespace } from './fields.ts';

/** Following links between entries: what caused what, what replaced what. */
export const memoryNeighbours: ToolDefinition = {
  name: 'memory_neighbours',
  title: 'Entries linked to or from an entry',
  description:
    'Follow the links between entries from one you know, in both directions: what it names (an incident caused_by a ' +
    'deploy, a decision that supersedes an older one, see_also notes) and what names it. Use it to find the cause of an ' +
    'incident, what a decision replaced, or everything related before you change something. depth walks further ' +
    '(1–3 links away); relation follows one kind of link only. Entries your key may not see are never reached. ' +
    'Answers {root, neighbours: [{entry, depth}], edges: [{from, to, relation}], truncated}. Links are written with ' +
    'memory_write: links: [{entity_path, key, relation}].',
  input: NeighboursInput.extend({
    namespace,
    entity_path: entityPath,
    key,
    depth: z.number().int().min(1).max(3).optional().describe('How many links away to walk, 1–3 (default 1).'),
    relation: z.string().optional().describe('Follow only this kind of link, e.g. "caused_by", "supersedes", "see_also".'),
    limit: z.number().int().min(1).max(200).optional().describe('Most entries to return, 1–200 (default 50).'),
  }).strict(),
  annotations: { title: 'Entries linked to or from an entry', ...READ_ONLY },
  operation: 'neighbours',
  call: async (ops, args) => ({ ...(await ops.neighbours(args)) }),
};
