import type { NeighbourEdge, NeighboursResponse } from 'cairn-memory-client';
import { z } from 'zod';
import { type Entry, type EntryAddress, isLive } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { parseInput } from '../domain/parse-input.ts';
import { namespaceFor, pathVisible, requirePath, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { MAX_LINKED_SOURCES } from '../ports/store.ts';
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
  // The sources of each node are filtered in the store (relation, liveness, the key's paths)
  // and capped there, one cap on every backend: one more than the cap is asked for, so a cut
  // is known and answered as truncated.
  const sourcesQuery = { relation: input.relation, liveAt: now, prefixes: ctx.access?.prefixes ?? null, limit: MAX_LINKED_SOURCES + 1 };
  let truncated = false;
  /** A node had more sources than the cap: the ones past it were not walked. */
  let capped = false;
  // At most LIMITS.pageJsonChars of entries' JSON: past it the walk stops, truncated.
  let used = fitInPage([root]).size;
  let frontier: Array<{ entry: Entry; id: string }> = [{ entry: root, id: idOf(root) }];
  for (let depth = 1; depth <= input.depth && frontier.length > 0 && !truncated; depth++) {
    const next: Array<{ entry: Entry; id: string }> = [];
    /** Reach `entry` (id `id`) through `edge`; the edge is kept only when both its ends are reached. */
    const meet = (entry: Entry, id: string, edge: NeighbourEdge, fromId: string, toId: string): void => {
      if (!reached.has(id)) {
        const fit = reached.size > input.limit ? null : fitInPage([entry], used);
        if (!fit || fit.count === 0) {
          truncated = true;
          return;
        }
        used = fit.size;
        reached.set(id, { entry, depth });
        next.push({ entry, id });
      }
      edges.set(`${fromId}\u0000${toId}\u0000${edge.relation}`, edge);
    };
    walk: for (const { entry: node, id: nodeId } of frontier) {
      // Versions written before links existed (filesystem, S3) carry none.
      for (const link of node.links ?? []) {
        // Checked before reading, so a hidden entry is not even fetched.
        if (!follows(link.relation) || !pathVisible(ctx, link.entity_path)) continue;
        const linkId = idOf(link);
        const target = reached.get(linkId)?.entry ?? (await deps.store.head({ namespace, ...keyOf(link) } as EntryAddress));
        if (usable(target)) meet(target, linkId, { from: keyOf(node), to: keyOf(link), relation: link.relation }, nodeId, linkId);
        if (truncated) break walk;
      }
      const sources = await deps.store.linkedTo({ namespace, ...keyOf(node) }, sourcesQuery);
      if (sources.length > MAX_LINKED_SOURCES) {
        capped = true;
        sources.length = MAX_LINKED_SOURCES;
      }
      for (const source of sources) {
        if (!usable(source)) continue;
        const sourceId = idOf(source);
        for (const link of source.links ?? []) {
          if (link.key === node.key && link.entity_path === node.entity_path && follows(link.relation)) {
            meet(source, sourceId, { from: keyOf(source), to: keyOf(node), relation: link.relation }, sourceId, nodeId);
            if (truncated) break walk;
          }
        }
      }
      if (truncated) break;
    }
    frontier = next;
  }
  truncated ||= capped;
  const neighbours = [...reached.values()].filter((n) => n.depth > 0).sort((a, b) => a.depth - b.depth);
  // Only links between entries the answer shows: a dropped (truncated) entry's links go with it.
  const shown = (k: { entity_path: string; key: string }) => reached.has(idOf(k));
  return { root, neighbours, edges: [...edges.values()].filter((e) => shown(e.from) && shown(e.to)), truncated };
};
