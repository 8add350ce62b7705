import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, expect, it } from 'vitest';
import { CompileLoop } from '../../packages/server/src/cortex/compile-loop.ts';
import { Compiler } from '../../packages/server/src/cortex/compiler.ts';
import { COLLECTIONS, CortexRecords } from '../../packages/server/src/cortex/cortex-records.ts';
import { KeyHistory } from '../../packages/server/src/cortex/key-history.ts';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';

/**
 * A forget costs what it reaches, not the namespace: forgetting one key among 600 paths
 * compiles that key's path again (and nothing the forget did not reach), where the worker
 * used to compile every path of the namespace.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-forget-cost-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const T0 = Date.now() - 3_600_000;
let seq = 0;
const entry = (entity_path: string, key: string, value: EntryValue): Entry => ({
  namespace: 'default', entity_path, key, value, version: 1, confidence: 0.9, agent_id: 'agent-1', event_type: null,
  memory_type: 'fact', shared: true, tags: [], provenance: {}, content_hash: contentHash(value),
  created_at: new Date(T0).toISOString(), written_at: new Date(T0 + ++seq).toISOString(), expires_at: null, deleted: false,
  evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
});

it('compiles again the path of one forgotten key, not the 600 paths of its namespace', async () => {
  const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  const records = new CortexRecords(store);
  const compiler = new Compiler({ store, records, history: new KeyHistory(store), now: Date.now, publish: () => {}, writeLink: async () => false });
  const loop = new CompileLoop({
    store, records, compiler, logger: pino({ level: 'silent' }), debounceMs: 10, namespace: 'default', now: Date.now, id: 'w', flushEvents: async () => {},
  });
  try {
    for (let i = 0; i < 600; i++) for (const key of ['a', 'b']) await store.append(entry(`agents/a/notes/n${String(i).padStart(3, '0')}`, key, { summary: `note ${i} ${key}` }), 0);
    loop.start();
    await loop.idle();
    const before = compiler.compiled;
    expect(before).toBeGreaterThanOrEqual(600);
    await store.forget({ namespace: 'default', prefix: 'agents/a/notes/n123', key: 'a' });
    for (let i = 0; i < 50 && compiler.compiled === before; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await loop.idle();
    expect(compiler.compiled - before).toBeLessThanOrEqual(2);
    // What the forget reached is there again, without the forgotten key; the other paths untouched.
    const digest = (await store.getRecord(COLLECTIONS.digests('default'), 'path:agents/a/notes/n123'))?.data as { summary: { keys: string[] } } | undefined;
    expect(digest?.summary.keys).toEqual(['b']);
    expect((await store.listRecords(COLLECTIONS.digests('default'), { limit: 1000 })).filter((r) => r.id.startsWith('path:'))).toHaveLength(600);
  } finally {
    await loop.stop();
    await store.close();
  }
}, 120_000);
