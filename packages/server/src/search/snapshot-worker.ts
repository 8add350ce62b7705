import { parentPort, workerData } from 'node:worker_threads';
import { readSnapshot } from './index-snapshot.ts';
import { transferablesOf } from './snapshot-transfer.ts';

/**
 * Decodes a saved search index on a thread of its own (snapshot-loader.ts): the file's bytes
 * come in by transfer, and the decoded arrays go back the same way, without copies. Every
 * saved vector is decoded: which embedder will search is decided on the main thread.
 */
const { bytes } = workerData as { bytes: Uint8Array };
const saved = await readSnapshot(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 'any');
parentPort?.postMessage(saved, saved ? transferablesOf(saved) : []);
