import { describe, expect, it } from 'vitest';
import { CoarseQuantizer, runInSlices } from '../../packages/server/src/search/coarse-quantizer.ts';
import { random } from '../../packages/server/src/search/seeded-random.ts';
import { trainQuantizer } from '../../packages/server/src/search/train-quantizer.ts';

const DIM = 16;
const ROWS = 3_000;

/** Unit vectors around a few directions, so that the k-means has clusters to find. */
const vectors = (): Float32Array => {
  const rand = random(7);
  const data = new Float32Array(ROWS * DIM);
  for (let r = 0; r < ROWS; r++) {
    let norm = 0;
    for (let d = 0; d < DIM; d++) {
      const v = (d === r % 5 ? 3 : 0) + rand() - 0.5;
      data[r * DIM + d] = v;
      norm += v * v;
    }
    for (let d = 0; d < DIM; d++) data[r * DIM + d]! /= Math.sqrt(norm);
  }
  return data;
};

const inSlices = (): Promise<CoarseQuantizer> =>
  runInSlices(CoarseQuantizer.train(vectors(), Array.from({ length: ROWS }, (_, i) => i), DIM, 40));

/**
 * The IVF lists' quantizer trains on a worker thread; what it trains must be exactly what
 * training on the event loop gives, with the worker or without one.
 */
describe('training the coarse quantizer off the event loop', () => {
  it('gives the centroids training in slices gives, and takes the sample by transfer', async () => {
    let given: Float32Array | null = null;
    const trained = await trainQuantizer(() => (given = vectors()), DIM, 40);
    expect(trained.parts).toEqual((await inSlices()).parts);
    // Moved to the worker, not copied: the sample left here is empty.
    expect(given!.length).toBe(0);
    expect(trained.lists).toBe(42);
    const sample = vectors();
    expect(trained.assign(sample, 5 * DIM)).toBe((await inSlices()).assign(sample, 5 * DIM));
  });

  it('trains here, on a sample taken again, when the worker cannot run', async () => {
    let taken = 0;
    const missing = new URL('./no-such-worker.ts', import.meta.url);
    const trained = await trainQuantizer(() => (taken++, vectors()), DIM, 40, missing);
    expect(taken).toBe(2);
    expect(trained.parts).toEqual((await inSlices()).parts);
  });
});
