import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Sql } from './client.ts';
import { SCHEMA_LOCK } from './migrate.ts';

/** pgvector's HNSW index takes vectors of up to 2000 dimensions. */
const MAX_INDEXED_DIMENSION = 2000;

export interface SearchEmbedder {
  id: string;
  dimension: number;
}

/**
 * `[0.1,0.2,…]`, pgvector's text form. Nine significant digits give back the same 32-bit
 * float (pgvector stores float4), in about 35 % fewer characters than a double's shortest
 * form, and formatting a 100-dimension vector takes 7 µs instead of 18 µs; the indexer
 * writes one per version.
 */
export const vectorLiteral = (v: Float32Array): string => {
  let out = '[';
  for (let i = 0; i < v.length; i++) out += (i === 0 ? '' : ',') + (v[i] as number).toPrecision(9);
  return `${out}]`;
};

/** The embedder recorded as this store's (cairn_meta `search_embedder`): the last server to start with vectors records its own. */
export const recordedEmbedder = async (sql: Sql): Promise<SearchEmbedder | null> => {
  const [row] = await sql<{ value: SearchEmbedder }[]>`select value from cairn_meta where name = 'search_embedder'`;
  return row?.value ?? null;
};

/** The dimension recorded for `embedderId`, or null when another embedder's, or none, is. */
export const recordedDimension = async (sql: Sql, embedderId: string): Promise<number | null> => {
  const value = await recordedEmbedder(sql);
  return value && value.id === embedderId && Number.isInteger(value.dimension) && value.dimension > 0 ? value.dimension : null;
};

/** The embedder id as an SQL string literal (it is written into index predicates and queries). */
export const embedderLiteral = (id: string): string => `'${id.replaceAll("'", "''")}'`;

/**
 * The rows whose vectors the embedder's index holds. The dimension is part of it: the rows of a
 * model that answered another dimension under the same name are set aside in the transaction
 * that builds the new index, but their old row versions are still indexed by it (another
 * transaction may see them), and their vectors do not fit its cast. Searches say the same
 * (search-index.ts), for the planner to use the index.
 */
export const vectorsOf = (embedder: SearchEmbedder): string => `embedder = ${embedderLiteral(embedder.id)} and vector_dims(embedding) = ${Math.trunc(embedder.dimension)}`;

const indexName = (e: SearchEmbedder): string => `cairn_search_hnsw_${createHash('sha256').update(`${e.id}/${e.dimension}`).digest('hex').slice(0, 12)}`;

/**
 * Record the embedder this store's search vectors come from (cairn_meta `search_embedder`),
 * and build its HNSW index over `embedding::vector(<dimension>)` for its rows only. A
 * different embedder than the one recorded means every row must be embedded again: the old
 * index is dropped (its rows no longer answer searches) and the caller re-embeds in the
 * background. Serialized with migrations by the same advisory lock; idempotent.
 */
export const prepareSearchVectors = async (sql: Sql, embedder: SearchEmbedder, logger: Logger): Promise<{ previous: SearchEmbedder | null }> => {
  if (!Number.isInteger(embedder.dimension) || embedder.dimension < 1 || embedder.dimension > MAX_INDEXED_DIMENSION) {
    throw new Error(`embedding dimension must be a whole number from 1 to ${MAX_INDEXED_DIMENSION} for pgvector's HNSW index (got ${embedder.dimension})`);
  }
  return sql.begin(async (tx) => {
    await tx`set local statement_timeout = 0`;
    await tx`select pg_advisory_xact_lock(${SCHEMA_LOCK}::int8)`;
    const [row] = await tx<{ value: SearchEmbedder }[]>`select value from cairn_meta where name = 'search_embedder'`;
    const previous = row?.value ?? null;
    const same = previous?.id === embedder.id && previous.dimension === embedder.dimension;
    if (!same) {
      if (previous) {
        await tx.unsafe(`drop index if exists ${indexName(previous)}`);
        // The same model name answering another dimension (a remote model replaced under its
        // name): its rows' vectors cannot be compared with the new ones, nor fit the new index's
        // cast. They are embedded again, as after any change of embedder.
        if (previous.id === embedder.id) {
          await tx.unsafe(`update cairn_search set embedder = null where embedder = ${embedderLiteral(embedder.id)} and vector_dims(embedding) <> ${embedder.dimension}`);
        }
        logger.info({ from: previous, to: embedder }, 'search embedder changed: every entry is embedded again in the background');
      }
      await tx`insert into cairn_meta (name, value) values ('search_embedder', ${tx.json({ id: embedder.id, dimension: embedder.dimension })})
               on conflict (name) do update set value = excluded.value`;
    }
    await tx.unsafe(
      `create index if not exists ${indexName(embedder)} on cairn_search
         using hnsw ((embedding::vector(${embedder.dimension})) vector_cosine_ops) where ${vectorsOf(embedder)}`,
    );
    return { previous: same ? null : previous };
  });
};
