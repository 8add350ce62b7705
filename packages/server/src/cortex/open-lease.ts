import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { type LeaderLease, ProcessLease } from '../ports/leases.ts';
import type { RecordStore } from '../ports/records.ts';

/**
 * The Cortex's lease on the configured backend. Each backend's lease opens its own
 * connection rather than borrowing the store's: a PostgreSQL advisory lock lives exactly as
 * long as one session, and the pool would recycle or share it. Backends load lazily, like
 * the stores themselves.
 */
export const openLease = async (config: Config, holder: string, logger: Logger): Promise<LeaderLease> => {
  switch (config.backend) {
    case 'postgres': {
      const { AdvisoryLease } = await import('../store/postgres/advisory-lease.ts');
      return new AdvisoryLease(config.dbDsn as string, logger);
    }
    case 's3': {
      const { s3Objects } = await import('../store/s3/s3-records.ts');
      const { objects, prefix } = s3Objects(config);
      const { LeaseObjects } = await import('../store/s3/lease-objects.ts');
      return new LeaseObjects(objects, prefix, 'cortex', holder, logger);
    }
    default:
      return new ProcessLease();
  }
};

/**
 * Just the shared records of the configured backend, without opening the whole store (no
 * migrations, no S3 snapshot load): what `cairn cortex --health` needs to read a heartbeat
 * within the container's 5-second check. Null for the filesystem, whose records live inside
 * the one server process.
 */
export const openSharedRecords = async (config: Config): Promise<{ records: RecordStore; close(): Promise<void> } | null> => {
  switch (config.backend) {
    case 'postgres': {
      const { postgresRecords } = await import('../store/postgres/records-client.ts');
      return postgresRecords(config.dbDsn as string);
    }
    case 's3': {
      const { s3Records } = await import('../store/s3/s3-records.ts');
      return s3Records(config);
    }
    default:
      return null;
  }
};
