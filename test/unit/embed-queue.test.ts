import pino from 'pino';
import { expect, it } from 'vitest';
import type { Embedder } from '../../packages/server/src/ports/embedder.ts';
import { EmbedQueue } from '../../packages/server/src/search/embed-queue.ts';

/** An in-process embedder that records the batches it is given (its vectors: the text's length). */
const recordingEmbedder = (): Embedder & { batches: string[][] } => {
  const batches: string[][] = [];
  return {
    id: 'recording',
    dimension: 1,
    local: true,
    batches,
    async embed(texts) {
      batches.push([...texts]);
      return texts.map((t) => Float32Array.of(t.length));
    },
  };
};

it('never embeds inside the caller that queued the text, and embeds what one turn queued as one batch', async () => {
  const embedder = recordingEmbedder();
  const applied: number[] = [];
  const queue = new EmbedQueue<number>(embedder, (items) => applied.push(...items), pino({ level: 'silent' }));
  for (let i = 0; i < 10; i++) queue.push({ item: i, text: 'x'.repeat(i) });
  // A write queues its text and answers at once: nothing was embedded on its turn.
  expect(embedder.batches).toEqual([]);
  await queue.idle();
  expect(embedder.batches.map((b) => b.length)).toEqual([10]);
  expect(applied).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

it('bounds an in-process batch, and lets other work run between the batches of a long backlog', async () => {
  const embedder = recordingEmbedder();
  const queue = new EmbedQueue<number>(embedder, () => {}, pino({ level: 'silent' }));
  for (let i = 0; i < 200; i++) queue.push({ item: i, text: 't' });
  // Other work (a request) that asks for a turn again and again while the backlog runs.
  const order: string[] = [];
  let stop = false;
  const otherWork = () => {
    order.push('request');
    if (!stop) setImmediate(otherWork);
  };
  setImmediate(otherWork);
  const embed = embedder.embed.bind(embedder);
  embedder.embed = async (texts) => {
    order.push('batch');
    return embed(texts);
  };
  await queue.idle();
  stop = true;
  expect(embedder.batches.map((b) => b.length)).toEqual([64, 64, 64, 8]);
  const batches = order.flatMap((what, i) => (what === 'batch' ? [i] : []));
  for (let b = 1; b < batches.length; b++) expect(order.slice(batches[b - 1], batches[b]), 'a request ran between two batches').toContain('request');
});
