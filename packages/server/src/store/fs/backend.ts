import { z } from 'zod';
import type { BackendCapabilities, OpenBackend } from '../../ports/backend.ts';
import { defineBackend } from '../backend-module.ts';
import { DEFAULT_DATA_DIR, dataDirWithoutStore, missingDataDir, unusableDataDir } from './data-dir-place.ts';

/**
 * The embedded default: a data directory owned by one server process, which therefore holds
 * the Cortex's lease itself and searches with the in-process index.
 */
// Each audit batch is a log append with its own fdatasync: one right behind each entry written
// one at a time doubled the syncs (p50 0.70 ms against 0.51 with a 10 ms window).
const CAPABILITIES: BackendCapabilities = { sharedAcrossReplicas: false, readsOverNetwork: false, auditWindowMs: 10 };

export const filesystemBackend = defineBackend({
  name: 'filesystem',
  capabilities: CAPABILITIES,
  selectedBy: null,
  env: { CAIRN_DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR) },
  settings: (env) => ({ dataDir: env.CAIRN_DATA_DIR }),
  open: async (settings, logger, options = {}): Promise<OpenBackend> => {
    const [{ openFsStore }, { ProcessLease }, { openMemorySearch }, { searchIndexFile }, { prefetchSnapshot }] = await Promise.all([
      import('./index.ts'),
      import('./process-lease.ts'),
      import('../../search/open-memory-search.ts'),
      import('./search-file.ts'),
      import('../../search/snapshot-loader.ts'),
    ]);
    // The index is saved beside the store's log, so a restart reads it instead of rebuilding
    // it. When search will be opened, the file is decoded on a worker thread while this one
    // loads the store: at a million entries each takes seconds.
    const searchLogger = logger.child({ component: 'search' });
    const indexFile = options.search ? prefetchSnapshot(searchIndexFile(settings.dataDir), searchLogger) : searchIndexFile(settings.dataDir);
    const store = await openFsStore({ dir: settings.dataDir, logger });
    return {
      name: 'filesystem',
      capabilities: CAPABILITIES,
      store,
      openLease: async () => new ProcessLease(),
      openSearch: (embedder) => openMemorySearch(store, embedder, searchLogger, indexFile),
    };
  },
  // The records live inside the server process that owns the directory.
  openSharedRecords: async () => null,
  unusablePlace: ({ dataDir }) => unusableDataDir(dataDir),
  missingPlace: ({ dataDir }) => missingDataDir(dataDir),
  placeWithoutData: ({ dataDir }) => dataDirWithoutStore(dataDir),
  localDirectory: ({ dataDir }) => dataDir,
});
