import { parentPort, Worker } from 'node:worker_threads';

/** What a thread answers once it has loaded its model: the vectors' dimension and a digest of what it loaded. */
export interface ThreadReady {
  dimension: number;
  digest: string;
}

interface ThreadRequest {
  id: number;
  texts: string[];
}

type ThreadMessage =
  | ({ type: 'ready' } & ThreadReady)
  | { type: 'failed'; message: string }
  | { type: 'vectors'; id: number; vectors: Float32Array[] }
  | { type: 'error'; id: number; message: string };

/** A model as a thread serves it. */
export interface ThreadModel extends ThreadReady {
  embed(texts: string[]): Promise<Float32Array[]> | Float32Array[];
}

/**
 * The thread's side: load the model, answer `ready` (or `failed`) once, then one message per
 * request, in order (one batch at a time: a model may use every core for one batch already).
 * Vectors cross back as transfers, not copies.
 */
export const serveEmbeddings = async (load: () => Promise<ThreadModel> | ThreadModel): Promise<void> => {
  const port = parentPort;
  if (!port) return;
  const post = (message: ThreadMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  try {
    const model = await load();
    let chain = Promise.resolve();
    port.on('message', ({ id, texts }: ThreadRequest) => {
      chain = chain.then(async () => {
        try {
          const vectors = await model.embed(texts);
          post({ type: 'vectors', id, vectors }, vectors.map((v) => v.buffer as ArrayBuffer));
        } catch (error) {
          post({ type: 'error', id, message: (error as Error).message });
        }
      });
    });
    post({ type: 'ready', dimension: model.dimension, digest: model.digest });
  } catch (error) {
    post({ type: 'failed', message: (error as Error).message });
  }
};

interface Pending {
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

/**
 * The owner's side: a worker thread running `script` (which calls serveEmbeddings), started
 * when first needed and again after it died (out of memory, say). `check` vets each start's
 * `ready` (another model's files, say) and may refuse it. The thread holds the process open
 * only while a batch is out, so a command that embeds a little still exits when it is done.
 */
export class EmbedThread {
  private readonly script: URL;
  private readonly workerData: unknown;
  private readonly check: (ready: ThreadReady) => void;
  private starting: Promise<Worker> | null = null;
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private closed = false;

  constructor(script: URL, workerData: unknown, check: (ready: ThreadReady) => void = () => {}) {
    this.script = script;
    this.workerData = workerData;
    this.check = check;
  }

  /**
   * Start the thread now; resolves to what it loaded, or rejects with why it could not.
   * `workerData` for this start only (a download checked where it lies before it is moved).
   */
  async start(workerData: unknown = this.workerData): Promise<ThreadReady> {
    const { ready } = await this.launch(workerData);
    return ready;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.closed) throw new Error('the embedder is closed');
    if (texts.length === 0) return [];
    const worker = this.worker ?? (await (this.starting ??= this.launch(this.workerData).then(({ worker: started }) => started).finally(() => (this.starting = null))));
    if (this.closed) throw new Error('the embedder is closed');
    const id = this.next++;
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, texts: [...texts] } satisfies ThreadRequest);
    });
  }

  /** Stop the thread while no batch is out, giving its memory back; the next batch starts it again. */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker || this.pending.size > 0) return;
    this.worker = null;
    await worker.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker ?? (await this.starting?.catch(() => null));
    this.worker = null;
    await worker?.terminate();
  }

  private launch(workerData: unknown): Promise<{ worker: Worker; ready: ThreadReady }> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(this.script, { workerData });
      let ready = false;
      worker.on('message', (m: ThreadMessage) => {
        if (m.type === 'ready') {
          try {
            this.check(m);
          } catch (error) {
            reject(error as Error);
            void worker.terminate();
            return;
          }
          ready = true;
          worker.unref();
          this.worker = worker;
          resolve({ worker, ready: { dimension: m.dimension, digest: m.digest } });
        } else if (m.type === 'failed') {
          reject(new Error(m.message));
          void worker.terminate();
        } else this.answer(m);
      });
      const stopped = (error: Error) => (ready ? this.lost(worker, error) : reject(error));
      worker.on('error', (error) => stopped(new Error(`the embedding thread failed: ${error.message}`)));
      worker.on('exit', (code) => stopped(new Error(`the embedding thread stopped (exit code ${code})`)));
    });
  }

  private answer(m: Extract<ThreadMessage, { id: number }>): void {
    const pending = this.pending.get(m.id);
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (m.type === 'vectors') pending?.resolve(m.vectors);
    else pending?.reject(new Error(m.message));
  }

  private lost(worker: Worker, error: Error): void {
    if (this.worker === worker) this.worker = null;
    for (const p of this.pending.values()) p.reject(this.closed ? new Error('the embedder is closed') : error);
    this.pending.clear();
  }
}
