import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';

// The built-in embedder's background batches (the index's queue, PostgreSQL's indexer) move to a
// thread of their own (embed/builtin-worker.ts) once they take a real share of the caller's
// thread; a query's vector is always made in the caller's thread.

const TEXTS = [
  'the payment service timed out after the deploy',
  'Renewed the TLS certificate; it expired on 2026-03-01',
  'ticket PAY-1234 retried 3 times then paged the on-call',
  'zxqv-unknown-token glorp',
  '',
  'rollback',
];

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'cairn-builtin-thread-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** About 1 KiB of text each: a batch of thousands takes a good part of a second wherever it runs. */
const heavy = (count: number): string[] => {
  const words = TEXTS.join(' ');
  return Array.from({ length: count }, (_, i) => `${words} ${words} ${words} ${words} ${words} ${words} ${words} number ${i}`);
};

/** Runs `work` with a 5 ms timer going; how long it took and how often the timer fired meanwhile. */
const timed = async <T>(work: () => Promise<T>): Promise<{ result: T; ms: number; ticks: number }> => {
  let ticks = 0;
  const timer = setInterval(() => (ticks += 1), 5);
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  clearInterval(timer);
  return { result, ms, ticks };
};

describe('the built-in embedder in the background', () => {
  it('makes, in its thread, the very vectors the caller\u2019s thread makes, in order', async () => {
    for (const lexicon of [true, false]) {
      const embedder = new BuiltinEmbedder({ lexicon });
      const here = await embedder.embed(TEXTS);
      // A heavy batch moves the background work to the thread; the next one runs there (timers
      // fire meanwhile), with these texts among its own.
      await embedder.embedInBackground(heavy(4000));
      const { result, ticks } = await timed(() => embedder.embedInBackground([...TEXTS, ...heavy(4000)]));
      expect(ticks).toBeGreaterThan(0);
      const there = result.slice(0, TEXTS.length);
      there.forEach((vector, i) => expect([...vector]).toEqual([...(here[i] as Float32Array)]));
      await embedder.close();
    }
  });

  it('embeds a light load in the caller\u2019s thread, and once embedding took over 50 ms of a second, in its own: this thread stays free', { timeout: 60_000 }, async () => {
    const embedder = new BuiltinEmbedder();
    const texts = heavy(4000);
    // The first heavy batch still runs here: no timer can fire until it ends.
    const here = await timed(() => embedder.embedInBackground(texts));
    expect(here.ms).toBeGreaterThan(100);
    expect(here.ticks).toBe(0);
    const there = await timed(() => embedder.embedInBackground(texts));
    expect(there.result).toEqual(here.result);
    // Had the batch run on this thread, no timer could have fired until it ended.
    expect(there.ms).toBeGreaterThan(100);
    expect(there.ticks).toBeGreaterThan(Math.min(10, there.ms / 50));
    await embedder.close();
    await expect(embedder.embedInBackground(['after close'])).rejects.toThrow('the embedder is closed');
  });

  it('stops a thread left idle, and embeds here again until the load returns', { timeout: 60_000 }, async () => {
    const embedder = new BuiltinEmbedder({ threadIdleMs: 200 });
    const texts = heavy(3000);
    expect((await timed(() => embedder.embedInBackground(texts))).ticks).toBe(0);
    expect((await timed(() => embedder.embedInBackground(texts))).ticks).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Idle past its time: the thread is gone, and the next heavy batch runs here, then moves again.
    const here = await timed(() => embedder.embedInBackground(texts));
    expect(here.ticks).toBe(0);
    const there = await timed(() => embedder.embedInBackground(texts));
    expect(there.ticks).toBeGreaterThan(0);
    expect(there.result).toEqual(here.result);
    await embedder.close();
  });

  it('holds a process open only while a batch is out: a command that embeds exits on its own', { timeout: 30_000 }, async () => {
    const script = join(scratch, 'embed-and-exit.ts');
    const source = new URL('../../packages/server/src/embed/builtin-embedder.ts', import.meta.url).href;
    await writeFile(
      script,
      `import { BuiltinEmbedder } from ${JSON.stringify(source)};\n` +
        `const embedder = new BuiltinEmbedder();\n` +
        // The first heavy batch moves the work to the thread; the next one goes through it.
        `await embedder.embedInBackground(${JSON.stringify(heavy(3000))});\n` +
        `const vectors = await embedder.embedInBackground(['one text', 'and another']);\n` +
        `console.log(vectors.length, vectors[0].length);\n`,
    );
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(out.trim()).toBe('2 100');
    expect(code).toBe(0);
  });
});
