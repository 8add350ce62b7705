import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Store } from '../ports/store.ts';

/**
 * The backend the configuration selects. Backends load lazily so that the filesystem
 * default never pulls in the PostgreSQL or S3 clients.
 */
export const openStore = async (config: Config, logger: Logger): Promise<Store> => {
  switch (config.backend) {
    case 'postgres': {
      const { openPostgresStore } = await import('./postgres/index.ts');
      return openPostgresStore({ dsn: config.dbDsn as string, logger });
    }
    case 's3': {
      const { openS3Store } = await import('./s3/index.ts');
      return openS3Store({
        bucket: config.objectBucket as string,
        endpoint: config.objectEndpoint,
        prefix: config.objectPrefix,
        region: config.objectRegion,
        logger,
      });
    }
    default: {
      const { openFsStore } = await import('./fs/index.ts');
      return openFsStore({ dir: config.dataDir, logger });
    }
  }
};
