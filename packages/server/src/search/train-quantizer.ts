import { Worker } from 'node:worker_threads';
import { workerScript } from '../package-files.ts';
import { CoarseQuantizer, runInSlices } from './coarse-quantizer.ts';

const WORKER = workerScript('search/quantizer-worker');

/**
 * Train a coarse quantizer for about `lists` lists on the vectors `sample()` gives (rows of
 * `dim` numbers), on a worker thread: the k-means runs are pure arithmetic on a copy, and on
 * the event loop they took its time from requests (half a second of it at 20,000 vectors,
 * in slices, while a store grew under writes). Where a worker cannot run, the training runs
 * here in slices, on a sample taken again (the first moved to the worker). Deterministic
 * either way: the same sample gives the same centroids. (`worker`: the script, for tests.)
 */
export const trainQuantizer = async (sample: () => Float32Array, dim: number, lists: number, worker: URL = WORKER): Promise<CoarseQuantizer> => {
  try {
    return await trainInWorker(sample(), dim, lists, worker);
  } catch {
    return runInSlices(CoarseQuantizer.trainOnAll(sample(), dim, lists));
  }
};

const trainInWorker = (data: Float32Array, dim: number, lists: number, script: URL): Promise<CoarseQuantizer> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(script, { workerData: { data, dim, lists }, transferList: [data.buffer as ArrayBuffer] });
    // A training never holds the process open: at exit, its result is not wanted.
    worker.unref();
    worker.once('message', ({ c1, c2, top, second }: CoarseQuantizer['parts']) => resolve(CoarseQuantizer.restore(dim, c1, c2, top, second)));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the quantizer training worker exited (${code}) without an answer`)));
  });
