import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, expect, it } from 'vitest';
import { CompileLoop } from '../../packages/server/src/cortex/compile-loop.ts';
import { Compiler } from '../../packages/server/src/cortex/compiler.ts';
import { CortexRecords } from '../../packages/server/src/cortex/cortex-records.ts';
import { KeyHistory } from '../../packages/server/src/cortex/key-history.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { LocalChangeFeed } from '../../packages/server/src/store/local-change-feed.ts';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { versionOf } from '../helpers/archive-fixture.ts';

/**
 * A write's notice can reach the Cortex after it started following the feed but before its
 * start-up catch-up has listed the namespaces (PostgreSQL's LISTEN delivers after the commit,
 * and later still on a loaded host). The catch-up scans that namespace, write included, once:
 * it used to queue a second full catch-up of the namespace for such a notice, and a debounced
 * compile for each one after it.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-early-notice-'));
afterAll(() => rm(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('scans a namespace once when its writes are announced before the catch-up lists the namespaces', async () => {
  const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  const records = new CortexRecords(store);
  const compiler = new Compiler({ store, records, history: new KeyHistory(store), now: Date.now, publish: () => {}, writeLink: async () => false });
  let compiles = 0;
  const loop = new CompileLoop({
    store, records, compiler, logger: pino({ level: 'silent' }), debounceMs: 20, namespace: 'default', now: Date.now, id: 'w',
    flushEvents: async () => {}, onCompiled: () => void (compiles += 1),
  });
  try {
    // Written before the loop starts: in the configured namespace and in one it learns of from the store.
    const written: Entry[] = [];
    for (const [namespace, key] of [['default', 'a'], ['team-b', 'b'], ['team-b', 'c']] as const) {
      const entry = versionOf({ namespace, entity_path: 'repos/acme/api', key }, 1, { at: Date.now() - 60_000, value: { summary: `note ${key}` } });
      await store.append(entry, 0);
      written.push(entry);
    }
    loop.start();
    // Their notices, late: after the loop subscribed, before its catch-up has read the namespaces.
    for (const entry of written) (store.changes as LocalChangeFeed).publish(entry);
    await loop.idle();
    // Long enough for any debounced compile the notices queued to run.
    await sleep(200);
    await loop.idle();
    // One catch-up of each namespace, which found every write.
    expect(compiles).toBe(2);
    expect([...loop.known].sort()).toEqual(['default', 'team-b']);
    expect(loop.queueDepth).toBe(0);
    expect((await records.getDigest('team-b', 'path:repos/acme/api'))?.summary.keys).toEqual(['b', 'c']);
  } finally {
    await loop.stop();
    await store.close();
  }
});
