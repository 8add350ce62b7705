import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { workerScript } from '../package-files.ts';
import { slicer } from './byte-codec.ts';
import { type LoadedSnapshot, type SnapshotFile, readSnapshot } from './index-snapshot.ts';

const WORKER = workerScript('search/snapshot-worker');

/** A saved index whose reading and decoding began when the file was handed over (`prefetchSnapshot`). */
export interface PrefetchedSnapshotFile extends SnapshotFile {
  readonly loading: Promise<LoadedSnapshot | null>;
}

/**
 * Read and decode a saved index off the main thread, with every saved vector (the caller
 * keeps those of its embedder). Null when there is no file or it cannot be used; never
 * rejects. Where a worker cannot run, the file is read again and decoded here, in slices.
 * (`worker`: the worker's script, for tests of that fallback.)
 */
export const loadSnapshot = async (file: SnapshotFile, logger: Logger, worker: URL = WORKER): Promise<LoadedSnapshot | null> => {
  const read = () =>
    file.read().catch((error: unknown) => {
      logger.warn({ err: error }, 'the saved search index could not be read; rebuilding it');
      return null;
    });
  const buf = await read();
  if (!buf) return null;
  let saved: LoadedSnapshot | null;
  try {
    saved = await decodeInWorker(buf, worker);
  } catch (error) {
    // The bytes went to the worker (a transfer leaves this side empty): read them again.
    logger.warn({ err: error }, 'decoding the saved search index on a worker thread failed; decoding it on the main thread');
    const again = await read();
    saved = again ? await readSnapshot(again, slicer()).catch(() => null) : null;
  }
  if (!saved) logger.warn('the saved search index is damaged or of another format; rebuilding it from the store');
  return saved;
};

/**
 * Start loading `file` now, so that decoding a large index (seconds at a million entries) runs
 * on another core while this thread does other start-up work, such as loading the store.
 */
export const prefetchSnapshot = (file: SnapshotFile, logger: Logger): PrefetchedSnapshotFile => ({
  read: () => file.read(),
  write: (fill) => file.write(fill),
  ...(file.claimSave ? { claimSave: file.claimSave.bind(file) } : {}),
  loading: loadSnapshot(file, logger),
});

const decodeInWorker = (buf: Buffer, script: URL): Promise<LoadedSnapshot | null> =>
  new Promise((resolve, reject) => {
    // A file read whole owns its memory and moves to the worker as it is; a slice of a shared
    // block (small reads come from Node's pool) is copied first.
    const bytes = buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength ? buf : Uint8Array.prototype.slice.call(buf);
    const worker = new Worker(script, { workerData: { bytes }, transferList: [bytes.buffer as ArrayBuffer] });
    // Kept referenced: whatever awaits the index keeps the process alive until it is loaded
    // (the server's own exit ends the worker with it).
    worker.once('message', (saved: LoadedSnapshot | null) => resolve(saved));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the index decoding worker exited (${code}) without an answer`)));
  });
