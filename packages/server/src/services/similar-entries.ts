import type { SimilarEntry } from 'cairn-memory-client';
import { z } from 'zod';
import type { Entry } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { embeddingText } from '../search-rules/entry-text.ts';
import { pathVisible } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';

/** Cosine similarity of the embedder's vectors at or above which a live entry counts as a near duplicate. */
export const DEFAULT_MIN_SIMILARITY = 0.85;
const DEFAULT_LIMIT = 3;
const MAX_LIMIT = 10;
/** A slow embedding endpoint must not hold a write that is already stored. */
const EMBED_TIMEOUT_MS = 2_000;

export const SimilarSchema = z
  .union([
    z.boolean(),
    z
      .object({
        min_similarity: z.number().min(0).max(1).optional().describe(`Cosine similarity (0–1) from which an entry counts as alike; default ${DEFAULT_MIN_SIMILARITY}.`),
        limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`Most entries to answer, 1–${MAX_LIMIT}; default ${DEFAULT_LIMIT}.`),
      })
      .strict(),
  ])
  .describe(
    `Also answer the live entries most like this one (similar: [{entry, similarity}]), so a near copy can be merged into an existing entry instead: true for the defaults (cosine similarity of the search vectors ≥ ${DEFAULT_MIN_SIMILARITY}, at most ${DEFAULT_LIMIT}), or {min_similarity, limit}. Off by default: it costs an embedding and a vector search per write. Needs the read scope as well.`,
  );
export type SimilarOption = z.output<typeof SimilarSchema>;

/**
 * The live entries of `entry`'s namespace most like it, by cosine similarity of the search
 * index's vectors (the same embedder and index a vector search uses, on every backend), at or
 * above the threshold, the entry itself left out, and only what the caller may see. Best
 * effort: with no vectors on this server, the embedder unreachable or the index not answering
 * (still loading, its database away), the answer is empty —
 * the write itself is already stored and is not failed for it. An index that follows writes
 * asynchronously (PostgreSQL) may not hold the last moment's writes yet.
 */
export const similarEntries = async (deps: ServiceDeps, ctx: Context, entry: Entry, option: SimilarOption | undefined): Promise<SimilarEntry[] | undefined> => {
  if (option === undefined || option === false) return undefined;
  const { min_similarity: threshold = DEFAULT_MIN_SIMILARITY, limit = DEFAULT_LIMIT } = option === true ? {} : option;
  const index = deps.search;
  const embedder = deps.embedder;
  if (!index || !embedder || !index.status().vectors) return [];
  let vector: Float32Array | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('embedding timed out')), EMBED_TIMEOUT_MS).unref());
    [vector] = await Promise.race([embedder.embed([embeddingText(entry)]), deadline]);
  } catch {
    return [];
  }
  if (!vector) return [];
  const filter = { namespace: entry.namespace, prefixes: ctx.access?.prefixes ?? undefined, now: deps.now() };
  const same = (e: Entry): boolean => e.entity_path === entry.entity_path && e.key === entry.key;
  // The index may be loading, or its database away (503): the write stands all the same.
  // Anything else is a bug, and is not hidden.
  const candidates = await index.vectorCandidates(vector, filter, limit + 1).catch((error: unknown) => {
    if (error instanceof ServiceError && error.code === 'UNAVAILABLE') return [];
    throw error;
  });
  return candidates
    .filter((c) => !same(c.entry) && c.score >= threshold && pathVisible(ctx, c.entry.entity_path))
    .slice(0, limit)
    .map((c) => ({ entry: c.entry, similarity: Math.round(c.score * 1e4) / 1e4 }));
};
