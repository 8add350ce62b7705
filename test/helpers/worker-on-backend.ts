import { afterEach } from 'vitest';
import type { CortexWorker } from '../../packages/server/src/cortex/worker.ts';
import type { OpenBackend } from '../../packages/server/src/ports/backend.ts';

/** The backend a test opened and the Cortex worker it started on it. */
export interface WorkerOnBackend {
  backend?: OpenBackend;
  worker?: CortexWorker;
}

/**
 * What each test of the calling suite sets in the answer is stopped after it, the worker
 * before its backend (a worker stopping on a closed store would log failures of its own).
 */
export const useWorkerOnBackend = (): WorkerOnBackend => {
  const held: WorkerOnBackend = {};
  afterEach(async () => {
    await held.worker?.stop();
    held.worker = undefined;
    await held.backend?.store.close();
    held.backend = undefined;
  });
  return held;
};
