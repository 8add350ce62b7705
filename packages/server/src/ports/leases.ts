/**
 * Leadership for work that exactly one process should do at a time (the Cortex): whoever
 * holds the lease is active, the others stand by and keep trying. Each backend implements it
 * with what it shares: PostgreSQL a session advisory lock, S3 a lease object taken with a
 * conditional put, the filesystem the process itself (one server owns the directory).
 *
 * A lease can be lost without notice (a dropped connection, a pause past its expiry); the
 * holder learns it from `renew`, which it calls at least every `renewEveryMs`, and must stop
 * the work at once when it answers false.
 */
export interface LeaderLease {
  /** How often the holder must renew (and a stand-by may retry acquiring). */
  readonly renewEveryMs: number;
  /** Become the holder if nobody holds the lease; true when this process holds it now. */
  tryAcquire(): Promise<boolean>;
  /** Confirm and extend the holding; false means the lease is lost (or was never held). */
  renew(): Promise<boolean>;
  /** Give the lease up so a stand-by can take over at once. Safe when not held. */
  release(): Promise<void>;
  /** Release, and free connections. Idempotent. */
  close(): Promise<void>;
}
