import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Store } from '../ports/store.ts';
import type { CortexEvent } from './cortex-records.ts';
import { openLease } from './open-lease.ts';
import { CortexWorker, newWorkerId } from './worker.ts';

/**
 * Start a Cortex worker on an open store: embedded in `cairn serve --with-cortex`, or alone
 * in `cairn cortex`. It stands by until it holds the backend's lease. `publishLocal` receives
 * compile events where the backend cannot carry them to other processes (the filesystem).
 */
export const startCortex = async (config: Config, store: Store, logger: Logger, publishLocal?: (event: CortexEvent) => void): Promise<CortexWorker> => {
  const id = newWorkerId();
  const log = logger.child({ component: 'cortex' });
  const worker = new CortexWorker({
    id,
    store,
    lease: await openLease(config, id, log),
    logger: log,
    debounceMs: config.cortexDebounceMs,
    namespace: config.namespace,
    ...(publishLocal ? { publishLocal } : {}),
  });
  worker.start();
  return worker;
};
