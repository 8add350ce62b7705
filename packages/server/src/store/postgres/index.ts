import { testableMs } from '../../domain/test-timing.ts';
import type { Logger } from 'pino';
import { createClient, redactDsn } from './client.ts';
import { storeError } from './db-errors.ts';
import { migrate } from './migrate.ts';
import { SchemaCheck } from './schema-check.ts';
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
  /** How often the change feed checks that its LISTEN session still delivers (Listening.checkMs). */
  feedCheckMs?: number;
  /**
   * How long a forget's row stays in cairn_forget_log (default a day, DEFAULT_FORGET_LOG_KEEP_MS):
   * a replica away longer checks what it holds against the heads (WriteFeed.recheck). Internal:
   * tests set a few seconds.
   */
  forgetLogKeepMs?: number;
}

/**
 * Connects, migrates the schema (serialized across servers by an advisory lock), starts the
 * LISTEN feed and returns the store. Rejects with UNAVAILABLE when the database cannot be
 * reached, so the caller can report it and exit or retry, and with SchemaMismatchError when
 * its schema is not one this release can use (newer, or missing a table or column).
 */
export const openPostgresStore = async (options: PostgresStoreOptions): Promise<PostgresStore> => {
  const logger = options.logger.child({ component: 'postgres' });
  // 10 s unless the caller says; CAIRN_TEST_QUERY_TIMEOUT_MS shortens it for tests alone (one
  // that holds a reply back from a server it spawned waits this long for the server's answer).
  const timeoutMs = options.queryTimeoutMs ?? testableMs('CAIRN_TEST_QUERY_TIMEOUT_MS', 10_000);
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
  // The readiness probe's own connection. On the pool, a probe queues behind the requests it
  // is meant to judge and, after an outage, behind a connection still waiting out its
  // reconnect delay: a busy or recovering replica would read as down and be taken out of
  // service just when it can serve. One connection, retried every half second while the
  // database is away, answers "does the database answer" and nothing else.
  const probe = createClient({ dsn: options.dsn, logger, max: 1, connectTimeoutS: options.connectTimeoutS ?? 3, statementTimeoutMs: 5_000, maxBackoffS: 0.5 });
  let feed: WriteFeed | undefined;
  try {
    const { vectors } = await migrate(sql, logger);
    // The schema as migrated: readiness turns red when part of it goes (PostgresStore.ping).
    const schema = await SchemaCheck.take(sql);
    feed = new WriteFeed(sql, logger, timeoutMs, {
      connect: () => createClient({ dsn: options.dsn, logger, max: 1, connectTimeoutS: options.connectTimeoutS ?? 3, statementTimeoutMs: timeoutMs + 5_000 }),
      ...(options.feedCheckMs === undefined ? {} : { checkMs: options.feedCheckMs }),
    });
    await feed.start();
    logger.info({ dsn: redactDsn(options.dsn), vectors }, 'postgres store ready');
    // Half the pool for append transactions leaves the rest to reads and the change feed.
    const writers = options.writers ?? Math.max(1, Math.floor(max / 2));
    return new PostgresStore(sql, feed, {
      logger, vectors, timeoutMs, writers, probe, schema,
      ...(options.forgetLogKeepMs === undefined ? {} : { forgetLogKeepMs: options.forgetLogKeepMs }),
    });
  } catch (error) {
    await feed?.close();
    await probe.end({ timeout: 0 }).catch(() => {});
    await sql.end({ timeout: 0 }).catch(() => {});
    throw storeError(error, `opening ${redactDsn(options.dsn)}`, logger);
  }
};
