import type { NeighbourEdge, NeighboursResponse } from 'cairn-memory-client';
import { z } from 'zod';
import { type Entry, type EntryAddress, isLive } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { parseInput } from '../domain/parse-input.ts';
import { namespaceFor, pathVisible, requirePath, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { AddressSchema, LinkSchema, wholeNumber } from './schemas.ts';
import { fitInPage } from './page-budget.ts';

export const NeighboursInput = AddressSchema.extend({
  depth: wholeNumber(1, 3).default(1).describe('How many links away to walk (1–3, default 1).'),
  relation: LinkSchema.shape.relation.optional().describe('Follow only links with this relation, e.g. "caused_by".'),
  limit: wholeNumber(1, 200).default(50).describe('Most entries to return (1–200, default 50).'),
}).strict();
export type NeighboursInput = z.input<typeof NeighboursInput>;

export type { NeighboursResponse };

const idOf = (e: { entity_path: string; key: string }): string => JSON.stringify([e.entity_path, e.key]);
const keyOf = (e: { entity_path: string; key: string }) => ({ entity_path: e.entity_path, key: e.key });

/**
 * Walk links from an entry in both directions (what it names, and what names it), breadth
 * first to `depth` hops. Every entry reached is checked against the caller's namespace and
 * prefixes before it is read further, so a walk never leaves what the key may see: a link
 * into a hidden path is a dead end, not a way through.
 */
export const entryNeighbours = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<NeighboursResponse> => {
  const input = parseInput(NeighboursInput, raw);
  requireScope(ctx, 'read');
  requirePath(ctx, input.entity_path);
  const namespace = namespaceFor(ctx, input.namespace);
  const now = deps.now();
  const root = await deps.store.head({ namespace, entity_path: input.entity_path, key: input.key });
  if (!root || !isLive(root, now)) throw new ServiceError('NOT_FOUND', `entry ${input.entity_path} / ${input.key} not found`);

  const reached = new Map<string, { entry: Entry; depth: number }>([[idOf(root), { entry: root, depth: 0 }]]);
  const edges = new Map<string, NeighbourEdge>();
  const follows = (relation: string) => input.relation === undefined || relation === input.relation;
  const usable = (entry: Entry | null): entry is Entry => entry !== null && isLive(entry, now) && pathVisible(ctx, entry.entity_path);
  let truncated = false;
  // At most LIMITS.pageJsonChars of entries' JSON: past it the walk stops, truncated.
  let used = fitInPage([root]).size;
  let frontier: Entry[] = [root];
  for (let depth = 1; depth <= input.depth && frontier.length > 0 && !truncated; depth++) {
    const next: Entry[] = [];
    const meet = (entry: Entry, edge: NeighbourEdge): void => {
      edges.set(JSON.stringify([idOf(edge.from), idOf(edge.to), edge.relation]), edge);
      if (reached.has(idOf(entry))) return;
      const fit = reached.size > input.limit ? null : fitInPage([entry], used);
      if (!fit || fit.count === 0) {
        truncated = true;
        return;
      }
      used = fit.size;
      reached.set(idOf(entry), { entry, depth });
      next.push(entry);
    };
    for (const node of frontier) {
      // Versions written before links existed (filesystem, S3) carry none.
      for (const link of node.links ?? []) {
        // Checked before reading, so a hidden entry is not even fetched.
        if (!follows(link.relation) || !pathVisible(ctx, link.entity_path)) continue;
        const target = reached.get(idOf(link))?.entry ?? (await deps.store.head({ namespace, ...keyOf(link) } as EntryAddress));
        if (usable(target)) meet(target, { from: keyOf(node), to: keyOf(link), relation: link.relation });
      }
      for (const source of await deps.store.linkedTo({ namespace, ...keyOf(node) })) {
        if (!usable(source)) continue;
        for (const link of source.links ?? []) {
          if (idOf(link) === idOf(node) && follows(link.relation)) meet(source, { from: keyOf(source), to: keyOf(node), relation: link.relation });
        }
      }
    }
    frontier = next;
  }
  const neighbours = [...reached.values()].filter((n) => n.depth > 0).sort((a, b) => a.depth - b.depth);
  // Only links between entries the answer shows: a dropped (truncated) entry's links go with it.
  const shown = (k: { entity_path: string; key: string }) => reached.has(idOf(k));
  return { root, neighbours, edges: [...edges.values()].filter((e) => shown(e.from) && shown(e.to)), truncated };
};
