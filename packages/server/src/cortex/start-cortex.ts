import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { OpenBackend } from '../ports/backend.ts';
import type { Store } from '../ports/store.ts';
import type { CortexEvent } from './cortex-records.ts';
import type { LinkWriter } from './known-links.ts';
import { CortexWorker, newWorkerId } from './worker.ts';

/**
 * Start a Cortex worker on an open backend (`store` is its store as the caller uses it): embedded in `cairn serve --with-cortex`, or alone
 * in `cairn cortex`. It stands by until it holds the backend's lease. `publishLocal` receives
 * compile events where the backend cannot carry them to other processes (the filesystem).
 */
export const startCortex = async (
  config: Readonly<Config>,
  backend: OpenBackend,
  store: Store,
  logger: Logger,
  writeLink: LinkWriter,
  publishLocal?: (event: CortexEvent) => void,
): Promise<CortexWorker> => {
  const id = newWorkerId();
  const log = logger.child({ component: 'cortex' });
  const worker = new CortexWorker({
    id,
    store,
    lease: await backend.openLease(id),
    shared: backend.capabilities.sharedAcrossReplicas,
    logger: log,
    debounceMs: config.cortexDebounceMs,
    namespace: config.namespace,
    writeLink,
    ...(publishLocal ? { publishLocal } : {}),
  });
  worker.start();
  return worker;
};
