import { parentPort, workerData } from 'node:worker_threads';
import { openOnnxModel } from './onnx-model.ts';

/**
 * The thread a local model runs in. ONNX Runtime for Node runs a graph synchronously on the
 * calling thread, for tens to hundreds of milliseconds a batch: here, requests keep being
 * served meanwhile. Answers `ready` (or `failed`) once, then one message per `embed` request.
 */
export interface WorkerRequest {
  id: number;
  texts: string[];
}

export type WorkerMessage =
  | { type: 'ready'; dimension: number; digest: string }
  | { type: 'failed'; message: string }
  | { type: 'vectors'; id: number; vectors: Float32Array[] }
  | { type: 'error'; id: number; message: string };

const port = parentPort;
if (port) {
  const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  try {
    const model = await openOnnxModel((workerData as { dir: string }).dir);
    // Requests run one after another: the runtime uses every core for one batch already.
    let chain = Promise.resolve();
    port.on('message', ({ id, texts }: WorkerRequest) => {
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
}
