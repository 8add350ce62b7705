import postgres from 'postgres';
import type { Logger } from 'pino';
import type { LeaderLease } from '../../ports/leases.ts';
import { redactDsn } from './client.ts';

/**
 * The two-key form of the advisory lock (pg_locks shows it with objsubid 2), so it can never
 * meet the one-key schema lock of migrate.ts. The keys spell "cair" "nctx".
 */
const KEYS = [0x63616972, 0x6e637478] as const;

/**
 * Leadership as a session advisory lock held on a connection of its own. PostgreSQL drops
 * the lock the moment that session ends — the holder was killed, its host vanished (found
 * by TCP keepalives on both sides), or the connection broke — so a stand-by's next
 * pg_try_advisory_lock wins. The holder asks pg_locks on every renew whether its current
 * session still holds the lock: after a silent reconnect the driver is on a new session that
 * does not, and the answer is false.
 */
export class AdvisoryLease implements LeaderLease {
  readonly renewEveryMs: number;
  private readonly sql: postgres.Sql;
  private readonly logger: Logger;
  private held = false;
  private closed = false;

  constructor(dsn: string, logger: Logger, renewEveryMs = 1000) {
    this.renewEveryMs = renewEveryMs;
    this.logger = logger.child({ component: 'cortex-lease', dsn: redactDsn(dsn) });
    this.sql = postgres(dsn, {
      max: 1,
      // A recycled connection would silently drop the lock; 0 turns both timers off.
      idle_timeout: 0,
      max_lifetime: 0,
      connect_timeout: 3,
      keep_alive: 5,
      onnotice: () => {},
      connection: {
        application_name: 'cairn-cortex-lease',
        // The server notices a vanished holder in ~20 s instead of the kernel's two hours.
        tcp_keepalives_idle: 5,
        tcp_keepalives_interval: 5,
        tcp_keepalives_count: 3,
        statement_timeout: 5000,
      },
    });
  }

  async tryAcquire(): Promise<boolean> {
    if (this.closed) return false;
    if (this.held) return this.renew();
    try {
      const [row] = await this.sql<Array<{ ok: boolean }>>`select pg_try_advisory_lock(${KEYS[0]}::int4, ${KEYS[1]}::int4) as ok`;
      this.held = row?.ok === true;
    } catch (error) {
      this.logger.debug({ err: error }, 'cortex lease: cannot reach PostgreSQL');
      this.held = false;
    }
    return this.held;
  }

  async renew(): Promise<boolean> {
    if (!this.held || this.closed) return false;
    try {
      const [row] = await this.sql<Array<{ held: boolean }>>`
        select exists (select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid() and granted
                         and classid = ${KEYS[0]}::int4::oid and objid = ${KEYS[1]}::int4::oid and objsubid = 2) as held`;
      this.held = row?.held === true;
    } catch (error) {
      this.logger.warn({ err: error }, 'cortex lease: lost the connection that held the lock');
      this.held = false;
    }
    return this.held;
  }

  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    await this.sql`select pg_advisory_unlock(${KEYS[0]}::int4, ${KEYS[1]}::int4)`.catch(() => {});
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.release();
    this.closed = true;
    // Ending the session frees the lock even if the unlock above could not be sent.
    await this.sql.end({ timeout: 1 });
  }
}
