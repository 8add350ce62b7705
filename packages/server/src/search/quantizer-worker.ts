import { parentPort, workerData } from 'node:worker_threads';
import { CoarseQuantizer } from './coarse-quantizer.ts';

/**
 * Trains a coarse quantizer on a thread of its own (train-quantizer.ts): the sample comes in
 * by transfer and the centroids go back the same way. Nothing else runs here, so the training
 * runs straight through instead of in slices.
 */
const { data, dim, lists } = workerData as { data: Float32Array; dim: number; lists: number };
const training = CoarseQuantizer.trainOnAll(data, dim, lists);
let step = training.next();
while (!step.done) step = training.next();
const parts = step.value.parts;
parentPort?.postMessage(parts, [parts.top.buffer as ArrayBuffer, ...parts.second.map((s) => s.buffer as ArrayBuffer)]);
