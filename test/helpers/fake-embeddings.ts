import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for a third-party embeddings service (OpenAI's `POST /v1/embeddings`, as
 * Ollama, vLLM and TEI also serve it), which tests cannot reach. Each word of a text adds to
 * one of `dimension` components picked by a hash, so texts sharing words are similar.
 * `down` makes it answer 503, as an overloaded or restarting endpoint does; `delayMs` makes
 * each answer that late, as a model busy on a CPU is.
 */
export interface FakeEmbeddings {
  url: string;
  down: boolean;
  delayMs: number;
  requests: { model: unknown; inputs: number; authorization: string | undefined }[];
  close(): Promise<void>;
}

/** A text's fake vector: each word adds 1 to the component its hash (FNV-1a) picks. */
export const hashedVector = (text: string, dimension: number): number[] => {
  const v = new Array<number>(dimension).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
    v[(h >>> 0) % dimension]! += 1;
  }
  return v;
};

export const startFakeEmbeddings = async (dimension = 32): Promise<FakeEmbeddings> => {
  const fake: FakeEmbeddings = { url: '', down: false, delayMs: 0, requests: [], close: async () => {} };
  const vector = (text: string): number[] => hashedVector(text, dimension);
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (fake.down || req.url !== '/v1/embeddings' || req.method !== 'POST') {
        res.writeHead(fake.down ? 503 : 404, { 'content-type': 'application/json' }).end('{"error":{"message":"unavailable"}}');
        return;
      }
      const parsed = JSON.parse(body) as { model: unknown; input: string[] };
      fake.requests.push({ model: parsed.model, inputs: parsed.input.length, authorization: req.headers.authorization });
      const data = parsed.input.map((text, index) => ({ object: 'embedding', index, embedding: vector(text) }));
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: parsed.model }));
      if (fake.delayMs > 0) setTimeout(answer, fake.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
};
