import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';

// The built-in embedder's background batches (the index's queue, PostgreSQL's indexer) run in a
// thread of their own (embed/builtin-worker.ts); a query's vector is made in the caller's thread.

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

describe('the built-in embedder in the background', () => {
  it('makes, in its thread, the very vectors the caller\u2019s thread makes, in order', async () => {
    for (const lexicon of [true, false]) {
      const embedder = new BuiltinEmbedder({ lexicon });
      const here = await embedder.embed(TEXTS);
      const there = await embedder.embedInBackground(TEXTS);
      expect(there).toHaveLength(TEXTS.length);
      there.forEach((vector, i) => expect([...vector]).toEqual([...(here[i] as Float32Array)]));
      await embedder.close();
    }
  });

  it('keeps this thread free while a large batch runs, and refuses work once closed', { timeout: 60_000 }, async () => {
    const embedder = new BuiltinEmbedder();
    await embedder.embedInBackground(['start the thread']);
    const words = TEXTS.join(' ');
    // About 1 KiB each: the batch takes a good part of a second wherever it runs.
    const texts = Array.from({ length: 4000 }, (_, i) => `${words} ${words} ${words} ${words} ${words} ${words} ${words} number ${i}`);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    const started = performance.now();
    const vectors = await embedder.embedInBackground(texts);
    const ms = performance.now() - started;
    clearInterval(timer);
    expect(vectors).toHaveLength(texts.length);
    expect(vectors[17]).toEqual((await embedder.embed([texts[17] as string]))[0]);
    // Had the batch run on this thread, no timer could have fired until it ended.
    expect(ms).toBeGreaterThan(100);
    expect(ticks).toBeGreaterThan(Math.min(10, ms / 50));
    await embedder.close();
    await expect(embedder.embedInBackground(['after close'])).rejects.toThrow('the embedder is closed');
  });

  it('holds a process open only while a batch is out: a command that embeds exits on its own', { timeout: 30_000 }, async () => {
    const script = join(scratch, 'embed-and-exit.ts');
    const source = new URL('../../packages/server/src/embed/builtin-embedder.ts', import.meta.url).href;
    await writeFile(
      script,
      `import { BuiltinEmbedder } from ${JSON.stringify(source)};\n` +
        `const vectors = await new BuiltinEmbedder().embedInBackground(['one text', 'and another']);\n` +
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
