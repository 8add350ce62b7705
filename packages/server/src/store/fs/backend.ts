import { z } from 'zod';
import type { BackendCapabilities, OpenBackend } from '../../ports/backend.ts';
import { defineBackend } from '../backend-module.ts';

/**
 * The embedded default: a data directory owned by one server process, which therefore holds
 * the Cortex's lease itself and searches with the in-process index.
 */
const CAPABILITIES: BackendCapabilities = { sharedAcrossReplicas: false };

export const filesystemBackend = defineBackend({
  name: 'filesystem',
  capabilities: CAPABILITIES,
  selectedBy: null,
  env: { CAIRN_DATA_DIR: z.string().min(1).default('/data/.cairn') },
  settings: (env) => ({ dataDir: env.CAIRN_DATA_DIR }),
  open: async (settings, logger): Promise<OpenBackend> => {
    const [{ openFsStore }, { ProcessLease }, { openMemorySearch }, { searchIndexFile }] = await Promise.all([
      import('./index.ts'),
      import('./process-lease.ts'),
      import('../../search/open-memory-search.ts'),
      import('./search-file.ts'),
    ]);
    const store = await openFsStore({ dir: settings.dataDir, logger });
    return {
      name: 'filesystem',
      capabilities: CAPABILITIES,
      store,
      openLease: async () => new ProcessLease(),
      // The index is saved beside the store's log, so a restart reads it instead of rebuilding it.
      openSearch: (embedder) => openMemorySearch(store, embedder, logger.child({ component: 'search' }), searchIndexFile(settings.dataDir)),
    };
  },
  // The records live inside the server process that owns the directory.
  openSharedRecords: async () => null,
});
