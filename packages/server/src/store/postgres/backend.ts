import { z } from 'zod';
import { optionalText } from '../../domain/env-values.ts';
import type { BackendCapabilities, OpenBackend } from '../../ports/backend.ts';
import { defineBackend } from '../backend-module.ts';
import { dsnProblem } from './dsn-problem.ts';

/**
 * PostgreSQL: the scale-out backend. Every replica shares the database, search runs in SQL
 * (tsvector, and pgvector where the extension is installed) or, with
 * CAIRN_SEARCH_INDEX=memory, in an index each replica keeps in process, and the Cortex's
 * lease is a session advisory lock.
 */
// An audit batch is one INSERT beside the writes' own statements: the filesystem's short window.
const CAPABILITIES: BackendCapabilities = { sharedAcrossReplicas: true, readsOverNetwork: true, auditWindowMs: 10 };

export const postgresBackend = defineBackend({
  name: 'postgres',
  capabilities: CAPABILITIES,
  selectedBy: 'CAIRN_DB_DSN',
  env: {
    CAIRN_DB_DSN: optionalText.pipe(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, { error: 'expected a postgres:// connection string' })
        // Read as the client reads it, and said what is wrong without repeating its password.
        .superRefine((dsn, ctx) => {
          const problem = dsnProblem(dsn);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional(),
    ),
    CAIRN_SEARCH_INDEX: z.enum(['postgres', 'memory'], { error: 'expected postgres (the default: search in the database) or memory (an index in each server process)' }).default('postgres'),
  },
  // Selected only when the DSN is set, so it is there whenever these settings are used.
  settings: (env) => ({ dsn: env.CAIRN_DB_DSN ?? '', searchIndex: env.CAIRN_SEARCH_INDEX }),
  open: async (settings, logger): Promise<OpenBackend> => {
    const [{ openPostgresStore }, { AdvisoryLease }] = await Promise.all([import('./index.ts'), import('./advisory-lease.ts')]);
    const searchLogger = logger.child({ component: 'search' });
    const store = await openPostgresStore({ dsn: settings.dsn, logger });
    return {
      name: 'postgres',
      capabilities: CAPABILITIES,
      store,
      // Its own connection: an advisory lock lives exactly as long as one session, and the
      // store's pool would recycle or share it.
      openLease: async () => new AdvisoryLease(settings.dsn, logger.child({ component: 'cortex' })),
      // In process: loaded at start from the saved index and the heads, fed by every replica's
      // writes (NOTIFY), and by this one's own as they are acknowledged, so that a write is
      // found once it is. Saved in the database, as S3's is in the bucket.
      openSearch: async (embedder) => {
        if (settings.searchIndex === 'memory') {
          const [{ openMemorySearch }, { searchSnapshotRows }] = await Promise.all([import('../../search/open-memory-search.ts'), import('./search-snapshot.ts')]);
          return openMemorySearch(store, embedder, searchLogger, searchSnapshotRows(settings.dsn, searchLogger), store.ownWrites);
        }
        const { openPostgresSearch } = await import('./search-index.ts');
        return openPostgresSearch(settings.dsn, store, embedder, searchLogger);
      },
    };
  },
  openSharedRecords: async (settings) => {
    const { postgresRecords } = await import('./records-client.ts');
    return postgresRecords(settings.dsn);
  },
});
