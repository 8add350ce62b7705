import { workerScript } from '../package-files.ts';
import type { Embedder } from '../ports/embedder.ts';
import { EmbedThread } from './embed-thread.ts';

const WORKER = workerScript('embed/onnx-worker');

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
  private readonly thread: EmbedThread;

  private constructor(id: string, dimension: number, thread: EmbedThread) {
    this.id = id;
    this.dimension = dimension;
    this.thread = thread;
  }

  /**
   * Load the model in `dir` (named `name` in the id); rejects with what is wrong with it.
   * `home` is where the files stay (a download is checked before it is moved there).
   */
  static async open(dir: string, name: string, home = dir): Promise<OnnxEmbedder> {
    let first: string | null = null;
    // A thread started again (after one died) reads the files from `home`: they must be the ones loaded first.
    const thread = new EmbedThread(WORKER, { dir: home }, ({ digest }) => {
      first ??= digest;
      if (digest !== first) throw new Error('the model files changed while running; restart to re-embed with them');
    });
    const ready = await thread.start({ dir });
    return new OnnxEmbedder(`onnx:${name}:${ready.digest}`, ready.dimension, thread);
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    return this.thread.embed(texts);
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}
