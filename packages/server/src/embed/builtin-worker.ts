import { workerData } from 'node:worker_threads';
import { BuiltinEmbedder } from './builtin-embedder.ts';
import { serveEmbeddings } from './embed-thread.ts';

// The thread the built-in embedder's background batches run in (BuiltinEmbedder.embedInBackground):
// its own copy of the word table, so the event loop keeps serving requests while entries are embedded.
await serveEmbeddings(() => {
  const embedder = new BuiltinEmbedder(workerData as { lexicon: boolean });
  embedder.warmVectors();
  return { dimension: embedder.dimension, digest: embedder.id, embed: (texts) => texts.map((text) => embedder.embedOne(text)) };
});
