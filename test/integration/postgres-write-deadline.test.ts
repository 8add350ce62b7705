import postgres from 'postgres';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import { parseConfig } from '../../packages/server/src/config.ts';
import { countBackendErrors } from '../../packages/server/src/http/backend-errors.ts';
import { appendVersion, appendVersions } from '../../packages/server/src/services/append-version.ts';
import type { Context, ServiceDeps } from '../../packages/server/src/services/context.ts';
import { recordOutcome } from '../../packages/server/src/services/record-outcome.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/**
 * A write answered UNAVAILABLE after the store's deadline has stored nothing, a write that
 * committed is not answered UNAVAILABLE, and writers waiting in line for one entry are each
 * answered within the deadline. The deadline here is 2 s (statements cancelled at 1.8 s, an
 * unanswered cancel given up at 2.2 s); another session holds the entry's head row
 * (SELECT … FOR UPDATE), as a long transaction of another replica would.
 */
const DEADLINE = 2_000;
const ANSWER_BY = DEADLINE + 250;

const timed = async <T>(work: Promise<T>) => {
  const started = performance.now();
  const outcome = await work.then(
    (value) => ({ ok: true as const, value, error: undefined }),
    (error: unknown) => ({ ok: false as const, value: undefined, error }),
  );
  return { ...outcome, ms: performance.now() - started };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('postgres writes under the deadline', () => {
  let pg: TestPostgres;
  let store: PostgresStore;
  let locker: postgres.Sql;
  const logger = pino({ level: 'silent' });
  const ns = `deadline-${Date.now()}`;
  let n = 0;
  const ctx: Context = { requestId: 'req-1', namespace: ns, agentId: 'tester' };
  let deps: ServiceDeps;

  beforeAll(async () => {
    pg = await startPostgres();
    store = await openPostgresStore({ dsn: pg.dsn, logger, queryTimeoutMs: DEADLINE, writers: 1 });
    locker = postgres(pg.dsn, { max: 4, onnotice: () => {} });
    // The store as the server's callers hold it: wrapped in a Proxy that counts its errors.
    deps = { store: countBackendErrors(store, () => {}), now: () => Date.now(), audit: { record: async () => {} }, config: parseConfig({ CAIRN_SECRET_KEY: 'test-secret-key-0123456789abcdef' }) } as unknown as ServiceDeps;
  });
  afterAll(async () => {
    await locker?.end({ timeout: 0 });
    await store?.close();
    await pg?.stop();
  });

  /** A fresh entry at version 1. */
  const fresh = async (key = 'k'): Promise<EntryAddress> => {
    const a = { namespace: ns, entity_path: `e/${++n}`, key };
    await store.append(makeEntry({ ...a, version: 1, value: 'v1' }), 0);
    return a;
  };

  /**
   * Holds the entry's head row from another session for `ms`, or until `release()` when that
   * comes first (once the writes waiting on it have been answered, nothing is left to wait
   * for); resolves once it is held. `release()` resolves once the row is let go.
   */
  const hold = async (a: EntryAddress, ms: number): Promise<{ release: () => Promise<void> }> => {
    let held!: () => void;
    const isHeld = new Promise<void>((r) => (held = r));
    let letGo!: () => void;
    const early = new Promise<void>((r) => (letGo = r));
    const released = locker.begin(async (t) => {
      await t`select 1 from cairn_heads where namespace = ${a.namespace} and entity_path = ${a.entity_path} and key = ${a.key} for update`;
      held();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise((r) => (timer = setTimeout(r, ms))), early]);
      clearTimeout(timer);
    }).then(() => {});
    await isHeld;
    return {
      release: () => {
        letGo();
        return released;
      },
    };
  };

  const versions = async (a: EntryAddress) => (await store.history(a, { limit: 10 })).map((e) => e.version);

  const next = (a: EntryAddress, value: string) => (view: { head: Entry | null }) =>
    ({ kind: 'append' as const, entry: makeEntry({ ...a, version: (view.head?.version ?? 0) + 1, value }) });

  it('answers a single write UNAVAILABLE within the deadline and stores nothing; its retry stores it once', async () => {
    const a = await fresh();
    const { release } = await hold(a, DEADLINE + 1_000);
    const r = await timed(appendVersion(deps, a, next(a, 'v2'), { ifVersion: 1 }));
    expect(r.error).toMatchObject({ code: 'UNAVAILABLE' });
    expect(r.ms).toBeLessThan(ANSWER_BY);
    await release();
    expect(await versions(a)).toEqual([1]);
    await appendVersion(deps, a, next(a, 'v2'), { ifVersion: 1 });
    expect(await versions(a)).toEqual([2, 1]);
  });

  it('answers a batch UNAVAILABLE within the deadline and stores none of it; its retry stores it once', async () => {
    const a = await fresh();
    const b = await fresh();
    const { release } = await hold(b, DEADLINE + 1_000);
    const batch = () => appendVersions(deps, [
      { address: a, decide: next(a, 'a2'), ifVersion: 1 },
      { address: b, decide: next(b, 'b2'), ifVersion: 1 },
    ]);
    const r = await timed(batch());
    expect(r.error).toMatchObject({ code: 'UNAVAILABLE' });
    expect(r.ms).toBeLessThan(ANSWER_BY);
    await release();
    expect([await versions(a), await versions(b)]).toEqual([[1], [1]]);
    await batch();
    expect([await versions(a), await versions(b)]).toEqual([[2, 1], [2, 1]]);
  });

  it('counts an outcome once when its first report was answered UNAVAILABLE and then retried', async () => {
    const a = await fresh();
    const { release } = await hold(a, DEADLINE + 1_000);
    const report = () => recordOutcome(deps, ctx, { namespace: ns, entries: [{ entity_path: a.entity_path, key: a.key }], outcome: 'failure' });
    const r = await timed(report());
    expect(r.error).toMatchObject({ code: 'UNAVAILABLE' });
    expect(r.ms).toBeLessThan(ANSWER_BY);
    await release();
    expect((await store.head(a))?.evidence).toMatchObject({ failures: 0 });
    await report();
    const head = await store.head(a);
    expect(head?.version).toBe(2);
    expect(head?.evidence).toMatchObject({ failures: 1 });
  });

  it('answers a write whose lock comes before the deadline by its commit', async () => {
    const a = await fresh();
    await hold(a, DEADLINE * 0.7);
    const r = await timed(appendVersion(deps, a, next(a, 'v2'), { ifVersion: 1 }));
    expect(r.ok).toBe(true);
    expect(await versions(a)).toEqual([2, 1]);
  });

  it('answers by what was stored when the lock goes just as the statement is cancelled', async () => {
    // Around the cancel (at 1.8 s): either answer may come, but it must match what is stored.
    for (const holdMs of [1_760, 1_790, 1_800, 1_810, 1_840]) {
      const a = await fresh();
      await hold(a, holdMs);
      const r = await timed(appendVersion(deps, a, next(a, 'v2'), { ifVersion: 1 }));
      if (!r.ok) expect(r.error).toMatchObject({ code: 'UNAVAILABLE' });
      expect(r.ms).toBeLessThan(ANSWER_BY);
      await sleep(100);
      expect({ holdMs, stored: await versions(a) }).toEqual({ holdMs, stored: r.ok ? [2, 1] : [1] });
    }
  });

  it('answers every writer in line for a stuck entry within the deadline, and stores none of the refused', async () => {
    const a = await fresh();
    const { release } = await hold(a, DEADLINE * 2.5);
    const writers = await Promise.all([0, 1, 2, 3].map((i) => timed(appendVersion(deps, a, next(a, `w${i}`)))));
    for (const w of writers) {
      expect(w.error).toMatchObject({ code: 'UNAVAILABLE' });
      expect(w.ms).toBeLessThan(ANSWER_BY);
    }
    await release();
    expect(await versions(a)).toEqual([1]);
    await appendVersion(deps, a, next(a, 'after'));
    expect(await versions(a)).toEqual([2, 1]);
  });

  it('rolls a group commit back as a whole when its deadline comes, and leaves the writes queued behind it alone', async () => {
    // writers: 1, so appends asked while one is out share the next transaction.
    const stuck = await fresh();
    const other = await fresh();
    const later = await fresh();
    const { release } = await hold(stuck, DEADLINE * 3);
    const first = timed(store.append(makeEntry({ ...stuck, version: 2 }), 1));
    await sleep(500);
    // Sent together once the first is cancelled (at 1.8 s); their own deadlines come at 2.3 s.
    const grouped = [timed(store.append(makeEntry({ ...stuck, version: 2 }), 1)), timed(store.append(makeEntry({ ...other, version: 2 }), 1))];
    const r = await first;
    expect(r.error).toMatchObject({ code: 'UNAVAILABLE' });
    for (const g of await Promise.all(grouped)) {
      expect(g.error).toMatchObject({ code: 'UNAVAILABLE' });
      expect(g.ms).toBeLessThan(ANSWER_BY);
    }
    expect(await versions(other)).toEqual([1]);
    // A write asked after the group was cancelled is not touched by it.
    const ok = await timed(store.append(makeEntry({ ...later, version: 2 }), 1));
    expect(ok.ok).toBe(true);
    await release();
    expect(await versions(stuck)).toEqual([1]);
  });

  it('answers a forget UNAVAILABLE within the deadline and forgets nothing; its retry forgets', async () => {
    const a = await fresh();
    const { release } = await hold(a, DEADLINE + 1_000);
    const r = await timed(store.forget({ namespace: ns, prefix: a.entity_path }));
    expect(r.error).toMatchObject({ code: 'UNAVAILABLE' });
    expect(r.ms).toBeLessThan(ANSWER_BY);
    await release();
    expect(await versions(a)).toEqual([1]);
    expect(await store.forget({ namespace: ns, prefix: a.entity_path })).toHaveLength(1);
    expect(await store.head(a)).toBeNull();
  });
});
