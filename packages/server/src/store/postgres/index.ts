import type { Logger } from 'pino';
import { createClient, redactDsn } from './client.ts';
import { toServiceError } from './db-errors.ts';
import { migrate } from './migrate.ts';
import { PostgresStore } from './postgres-store.ts';
import { WriteFeed } from './write-feed.ts';

export { PostgresStore } from './postgres-store.ts';

export interface PostgresStoreOptions {
  dsn: string;
  logger: Logger;
  /** Connections in this process's pool. */
  max?: number;
  /** Append transactions in flight at once; appends beyond share transactions (group commit). */
  writers?: number;
  /** Seconds to wait for a connection before the operation fails as UNAVAILABLE. */
  connectTimeoutS?: number;
  /** Milliseconds an operation may take before it fails as UNAVAILABLE. */
  queryTimeoutMs?: number;
}

/**
 * Connects, migrates the schema (serialized across servers by an advisory lock), starts the
 * LISTEN feed and returns the store. Rejects with UNAVAILABLE when the database cannot be
 * reached, so the caller can report it and exit or retry.
 */
export const openPostgresStore = async (options: PostgresStoreOptions): Promise<PostgresStore> => {
  const logger = options.logger.child({ component: 'postgres' });
  const timeoutMs = options.queryTimeoutMs ?? 10_000;
  const max = options.max ?? 10;
  const sql = createClient({
    dsn: options.dsn,
    logger,
    max,
    connectTimeoutS: options.connectTimeoutS ?? 3,
    // A little above the client-side deadline, so the server frees the connection of a
    // statement whose caller has already been answered with a 503.
    statementTimeoutMs: timeoutMs + 5_000,
  });
  try {
    const { vectors } = await migrate(sql, logger);
    const feed = new WriteFeed(sql, logger, timeoutMs);
    await feed.start();
    logger.info({ dsn: redactDsn(options.dsn), vectors }, 'postgres store ready');
    // Half the pool for append transactions leaves the rest to reads and the change feed.
    const writers = options.writers ?? Math.max(1, Math.floor(max / 2));
    return new PostgresStore(sql, feed, { logger, vectors, timeoutMs, writers });
  } catch (error) {
    await sql.end({ timeout: 0 }).catch(() => {});
    throw toServiceError(error, `opening ${redactDsn(options.dsn)}`, logger);
  }
};
