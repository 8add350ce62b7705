import postgres from 'postgres';
import type { Logger } from 'pino';

export type Sql = postgres.Sql;

export interface ClientOptions {
  dsn: string;
  logger: Logger;
  /** Pool size per process; every replica holds this many connections at most. */
  max: number;
  /** Seconds to wait for a TCP connection and the startup handshake. */
  connectTimeoutS: number;
  /** Server-side cap on one statement, so a runaway query frees its connection. */
  statementTimeoutMs: number;
  /** Longest wait in seconds between reconnection attempts while the database is down. */
  maxBackoffS?: number;
  /** Settings each connection starts with (startup parameters), beside the timeout. */
  settings?: Readonly<Record<string, string | number>>;
}

/**
 * Retry delay in seconds after the n-th failed connection attempt in a row. The driver's
 * default grows to 20 s, which would keep the LISTEN connection (it shares the counter) away
 * for that long after the database returns; a 2 s cap keeps recovery quick while a
 * database that stays down costs at most one refused connection per slot every 2 s.
 */
const DEFAULT_MAX_BACKOFF_S = 2;
const backoffUpTo = (maxS: number) => (attempt: number): number => Math.min(0.1 * 2 ** attempt, maxS);

/** The DSN with its password removed, safe for logs and error messages. */
export const redactDsn = (dsn: string): string => {
  try {
    const url = new URL(dsn);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'postgres://(unparsable DSN)';
  }
};

export const createClient = (options: ClientOptions): Sql =>
  postgres(options.dsn, {
    max: options.max,
    connect_timeout: options.connectTimeoutS,
    backoff: backoffUpTo(options.maxBackoffS ?? DEFAULT_MAX_BACKOFF_S),
    // The driver's start-up query for array types drops its promise, so a connection lost
    // during that query becomes an unhandled rejection that exits the process
    // (porsager/postgres#1192, #1223). Cairn needs no array type parsing from the driver:
    // text[] goes in as a literal and comes out as jsonb (entry-row.ts).
    fetch_types: false,
    // Seconds of silence before TCP keepalive probes start, so a connection to a host that
    // vanished (no FIN, no RST) is found dead in about half a minute, not after many minutes.
    keep_alive: 15,
    // The driver prints notices to stdout by default; they are diagnostics, not output.
    onnotice: (notice) => options.logger.debug({ notice: notice.message }, 'postgres notice'),
    connection: {
      application_name: 'cairn',
      statement_timeout: options.statementTimeoutMs,
      ...options.settings,
    },
  });
