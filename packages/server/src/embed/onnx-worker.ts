import { workerData } from 'node:worker_threads';
import { serveEmbeddings } from './embed-thread.ts';
import { openOnnxModel } from './onnx-model.ts';

// The thread a local model runs in. ONNX Runtime for Node runs a graph synchronously on the
// calling thread, for tens to hundreds of milliseconds a batch: here, requests keep being
// served meanwhile.
await serveEmbeddings(() => openOnnxModel((workerData as { dir: string }).dir));
