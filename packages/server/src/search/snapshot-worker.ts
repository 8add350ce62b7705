import { parentPort, workerData } from 'node:worker_threads';
import { readSnapshot, transferablesOf } from './index-snapshot.ts';

/**
 * Decodes a saved search index on a thread of its own (snapshot-loader.ts): the file's bytes
 * come in by transfer, and the decoded arrays go back the same way, without copies.
 */
const { bytes } = workerData as { bytes: Uint8Array };
const saved = await readSnapshot(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
parentPort?.postMessage(saved, saved ? transferablesOf(saved) : []);
