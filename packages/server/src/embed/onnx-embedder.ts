import { Worker } from 'node:worker_threads';
import type { Embedder } from '../ports/embedder.ts';
import type { WorkerMessage, WorkerRequest } from './onnx-worker.ts';

// The sources run as .ts (tests, `npm start`), the package as compiled .js.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './onnx-worker.ts' : './onnx-worker.js', import.meta.url);

interface Pending {
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

/** A started worker with its model loaded, or the reason it could not load. */
const startWorker = (dir: string, onMessage: (m: WorkerMessage) => void, onExit: (error: Error) => void): Promise<{ worker: Worker; dimension: number; digest: string }> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { dir } });
    let ready = false;
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'ready') {
        ready = true;
        resolve({ worker, dimension: m.dimension, digest: m.digest });
      } else if (m.type === 'failed') {
        reject(new Error(m.message));
        void worker.terminate();
      } else onMessage(m);
    });
    const stopped = (error: Error) => (ready ? onExit(error) : reject(error));
    worker.on('error', (error) => stopped(new Error(`the model thread failed: ${error.message}`)));
    worker.on('exit', (code) => stopped(new Error(`the model thread stopped (exit code ${code})`)));
  });

/**
 * A sentence model run in-process with ONNX Runtime (CAIRN_EMBEDDINGS_MODEL), in a thread of
 * its own so inference never holds up requests. Vectors are mean- or CLS-pooled as the model
 * says and L2-normalised. Not `local` in the port's sense: a batch costs milliseconds, so
 * vectors are made in the background as for a remote endpoint, and searches do not wait.
 * The id names the model and a digest of its files, so another model, or the same name with
 * other weights, re-embeds every entry.
 */
export class OnnxEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly local = false;
  private worker: Worker | null;
  private readonly dir: string;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private closed = false;

  private constructor(dir: string, id: string, dimension: number, worker: Worker) {
    this.dir = dir;
    this.id = id;
    this.dimension = dimension;
    this.worker = worker;
  }

  /**
   * Load the model in `dir` (named `name` in the id); rejects with what is wrong with it.
   * `home` is where the files stay (a download is checked before it is moved there).
   */
  static async open(dir: string, name: string, home = dir): Promise<OnnxEmbedder> {
    let embedder: OnnxEmbedder | undefined;
    const started = await startWorker(dir, (m) => embedder?.answer(m), (e) => embedder?.lost(e));
    embedder = new OnnxEmbedder(home, `onnx:${name}:${started.digest}`, started.dimension, started.worker);
    return embedder;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.closed) throw new Error('the embedder is closed');
    if (texts.length === 0) return [];
    // A thread that died (out of memory, say) is started again for the next batch.
    this.worker ??= await this.restart();
    const id = this.next++;
    const worker = this.worker;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, texts: [...texts] } satisfies WorkerRequest);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private async restart(): Promise<Worker> {
    const started = await startWorker(this.dir, (m) => this.answer(m), (e) => this.lost(e));
    if (`${this.id.slice(0, this.id.lastIndexOf(':'))}:${started.digest}` !== this.id) {
      await started.worker.terminate();
      throw new Error('the model files changed while running; restart to re-embed with them');
    }
    return started.worker;
  }

  private answer(m: WorkerMessage): void {
    if (m.type !== 'vectors' && m.type !== 'error') return;
    const pending = this.pending.get(m.id);
    this.pending.delete(m.id);
    if (m.type === 'vectors') pending?.resolve(m.vectors);
    else pending?.reject(new Error(m.message));
  }

  private lost(error: Error): void {
    this.worker = null;
    for (const p of this.pending.values()) p.reject(this.closed ? new Error('the embedder is closed') : error);
    this.pending.clear();
  }
}
