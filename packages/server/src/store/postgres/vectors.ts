import type postgres from 'postgres';
import type { Logger } from 'pino';
import type { Sql } from './client.ts';

/** An embedder whose dimension this store cannot take: a configuration error, not an outage. */
export class EmbeddingDimensionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingDimensionError';
  }
}

/** pgvector's HNSW index takes vectors of up to 2000 dimensions. */
const MAX_INDEXED_DIMENSION = 2000;

/**
 * Makes sure the pgvector extension exists, creating it if this role may. Without it the
 * store still works; vector search is off and the server says so at start. Runs inside the
 * migration transaction, so a failed CREATE EXTENSION is fenced off by a savepoint.
 */
export const ensureVectorExtension = async (tx: postgres.TransactionSql, logger: Logger): Promise<boolean> => {
  const [row] = await tx<{ installed: boolean; available: boolean }[]>`
    select exists (select 1 from pg_extension where extname = 'vector') as installed,
           exists (select 1 from pg_available_extensions where name = 'vector') as available`;
  if (row?.installed) return true;
  if (!row?.available) {
    logger.warn('vector search disabled: pgvector not installed');
    return false;
  }
  try {
    await tx.savepoint((sp) => sp`create extension if not exists vector`);
    return true;
  } catch (error) {
    logger.warn({ err: error }, 'vector search disabled: pgvector is installed but this role cannot create the extension');
    return false;
  }
};

/**
 * Records the embedder's dimension (once per store: vectors of different sizes cannot be
 * compared) and builds the HNSW index over `embedding::vector(<dimension>)`. Search queries
 * must order by that same expression for the index to apply. Idempotent; serialized with
 * migrations by the same advisory lock.
 */
export const prepareEmbeddings = async (sql: Sql, dimension: number, lock: number): Promise<void> => {
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > MAX_INDEXED_DIMENSION) {
    throw new EmbeddingDimensionError(`embedding dimension must be a whole number from 1 to ${MAX_INDEXED_DIMENSION}`);
  }
  await sql.begin(async (tx) => {
    await tx`set local statement_timeout = 0`;
    await tx`select pg_advisory_xact_lock(${lock}::int8)`;
    const [row] = await tx<{ value: number }[]>`select value from cairn_meta where name = 'embedding_dimension'`;
    if (row && row.value !== dimension) {
      throw new EmbeddingDimensionError(`this store's embeddings have ${row.value} dimensions; the embedder produces ${dimension}`);
    }
    if (!row) await tx`insert into cairn_meta (name, value) values ('embedding_dimension', to_jsonb(${dimension}::int))`;
    await tx.unsafe(
      `create index if not exists cairn_versions_embedding_hnsw on cairn_versions
         using hnsw ((embedding::vector(${dimension})) vector_cosine_ops) where embedding is not null`,
    );
  });
};
