import { describe, expect, it } from 'vitest';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import { ServiceError } from '../../packages/server/src/domain/errors.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { type AppendDecision, type HeadView, appendVersion, appendVersions } from '../../packages/server/src/services/append-version.ts';
import { followingProblem } from '../../packages/server/src/services/archive/archived-history.ts';
import { nextVersion } from '../../packages/server/src/services/write-entry.ts';

/**
 * The write protocol (services/append-version.ts) over a real backend: every write, delete,
 * outcome and delivery goes through it, so its retries must meet each backend's own way of
 * refusing a stale append. Run by the Store contract, hence on every backend.
 */
let unique = 0;

const versionOf = (address: EntryAddress, version: number, value: Record<string, unknown>, deleted = false): Entry => {
  const at = new Date().toISOString();
  return {
    ...address, value, version, confidence: 1, agent_id: 'tester', event_type: null, memory_type: 'fact', shared: false,
    tags: [], provenance: {}, content_hash: contentHash(value), created_at: at, written_at: at, expires_at: null, deleted, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
  };
};

/** Appends `value` on top of whatever head the attempt read. */
const appendValue = (address: EntryAddress, value: Record<string, unknown>) => ({ head }: HeadView): AppendDecision => ({
  kind: 'append',
  entry: versionOf(address, (head?.version ?? 0) + 1, value),
});

/**
 * The store, counting head reads and appends; with `competeTimes`, another writer appends a
 * version right after each of the first `competeTimes` head reads — between the read and
 * the caller's append, which is exactly the race the protocol exists for. Its own unconfirmed
 * heads (Store.knownHead) are hidden, so every attempt reads `head`, unless `known` stands in
 * for them (a replica's view that may lag: see the guessed-head tests).
 */
const watched = (store: Store, competeTimes = 0, known?: (address: EntryAddress) => Entry | null) => {
  const calls = { head: 0, append: 0, competitor: 0, known: 0 };
  const proxy = new Proxy(store, {
    get(target, prop) {
      if (prop === 'knownHead') {
        return (
          known &&
          ((address: EntryAddress) => {
            calls.known++;
            return known(address);
          })
        );
      }
      if (prop === 'head') {
        return async (address: EntryAddress) => {
          calls.head++;
          const head = await target.head(address);
          if (calls.competitor < competeTimes) {
            calls.competitor++;
            await target.append(versionOf(address, (head?.version ?? 0) + 1, { competitor: calls.competitor }), head?.version ?? 0);
          }
          return head;
        };
      }
      if (prop === 'append') {
        return (entry: Entry, expected: number) => {
          calls.append++;
          return target.append(entry, expected);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: proxy, calls };
};

const conflictOf = async (work: Promise<unknown>): Promise<ServiceError> => {
  const error = await work.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
};

export const describeAppendVersionContract = (getStore: () => Store): void => {
  describe('appendVersion over this store', () => {
    const fresh = (): EntryAddress => ({ namespace: `append${++unique}-${Date.now()}`, entity_path: 'repos/acme/api', key: 'hot' });
    const deps = (store: Store) => ({ store, now: Date.now });

    it('lands N concurrent writers of one entry as versions 1..N, losing none', async () => {
      const address = fresh();
      const writers = 16;
      const results = await Promise.all(
        Array.from({ length: writers }, (_, i) => appendVersion(deps(getStore()), address, appendValue(address, { writer: i }))),
      );
      expect(results.every((r) => r.created)).toBe(true);
      expect(results.map((r) => r.entry.version).sort((a, b) => a - b)).toEqual(Array.from({ length: writers }, (_, i) => i + 1));
      const history = await getStore().history(address, { limit: 100 });
      expect(history.map((e) => e.version)).toEqual(Array.from({ length: writers }, (_, i) => writers - i));
      expect(new Set(history.map((e) => (e.value as { writer: number }).writer)).size).toBe(writers);
    });

    it('lets writers of one entry in this process take turns, so each wins at its first attempt', async () => {
      const address = fresh();
      const { store, calls } = watched(getStore());
      const writers = 60;
      const results = await Promise.all(
        Array.from({ length: writers }, (_, i) => appendVersion(deps(store), address, appendValue(address, { writer: i }))),
      );
      // In arrival order, one head read and one append each: no writer lost a race to another.
      expect(results.map((r) => r.entry.version)).toEqual(Array.from({ length: writers }, (_, i) => i + 1));
      expect(calls).toMatchObject({ head: writers, append: writers });
    });

    it('lets batches and single writers sharing entries take turns without waiting on each other for good', async () => {
      const hot = fresh();
      const other = { ...hot, key: 'other' };
      const { store, calls } = watched(getStore());
      const pair = (i: number, first: EntryAddress, second: EntryAddress) =>
        appendVersions(deps(store), [first, second].map((address) => ({ address, decide: appendValue(address, { batch: i }) })));
      // Batches naming the two entries in either order, and single writers of one of them.
      const work = await Promise.all([
        ...Array.from({ length: 8 }, (_, i) => pair(i, i % 2 ? hot : other, i % 2 ? other : hot)),
        ...Array.from({ length: 8 }, (_, i) => appendVersion(deps(store), hot, appendValue(hot, { single: i }))),
      ]);
      expect(work).toHaveLength(16);
      expect((await getStore().head(hot))?.version).toBe(16);
      expect((await getStore().head(other))?.version).toBe(8);
      // Each batch read both heads once, each single writer one: no attempt was retried.
      expect(calls.head).toBe(8 * 2 + 8);
    });

    it('retries a lost race on top of the winner, re-deciding from the new head', async () => {
      const address = fresh();
      const { store, calls } = watched(getStore(), 1);
      const seen: Array<number | null> = [];
      const result = await appendVersion(deps(store), address, (view) => {
        seen.push(view.head?.version ?? null);
        return appendValue(address, { mine: true })(view);
      });
      expect(seen).toEqual([null, 1]);
      expect(result).toMatchObject({ created: true, entry: { version: 2, value: { mine: true } } });
      expect(calls).toMatchObject({ head: 2, append: 2 });
      expect((await getStore().version(address, 1))?.value).toEqual({ competitor: 1 });
    });

    it('answers an explicit ifVersion that lost the race with a 409 at once, never retrying', async () => {
      const address = fresh();
      await getStore().append(versionOf(address, 1, { first: true }), 0);
      const { store, calls } = watched(getStore(), 1);
      const error = await conflictOf(appendVersion(deps(store), address, appendValue(address, { mine: true }), { ifVersion: 1 }));
      expect(error.code).toBe('CONFLICT');
      expect(error.message).toBe('entry was changed concurrently (now at version 2)');
      expect(calls).toMatchObject({ head: 1, append: 1 });
      expect((await getStore().head(address))?.value).toEqual({ competitor: 1 });
    });

    it('refuses a stale ifVersion before appending, counting a deleted head as 0', async () => {
      const address = fresh();
      await getStore().append(versionOf(address, 1, { a: 1 }), 0);
      await getStore().append(versionOf(address, 2, { a: 2 }), 1);
      const { store, calls } = watched(getStore());
      const stale = await conflictOf(appendVersion(deps(store), address, appendValue(address, { late: true }), { ifVersion: 1 }));
      expect(stale).toMatchObject({ code: 'CONFLICT', message: 'entry is at version 2, not 1' });
      expect(calls.append).toBe(0);
      await getStore().append(versionOf(address, 3, {}, true), 2);
      const revived = await appendVersion(deps(getStore()), address, appendValue(address, { again: true }), { ifVersion: 0 });
      expect(revived.entry.version).toBe(4);
    });

    it('stores nothing when unchanged, and lets a refusal win over an ifVersion mismatch', async () => {
      const address = fresh();
      const first = versionOf(address, 1, { a: 1 });
      await getStore().append(first, 0);
      const { store, calls } = watched(getStore());
      const same = await appendVersion(deps(store), address, ({ live }) => ({ kind: 'unchanged', entry: live as Entry }));
      expect(same).toEqual({ created: false, entry: first });
      const refusal = new ServiceError('NOT_FOUND', 'gone');
      expect(await conflictOf(appendVersion(deps(store), address, () => ({ kind: 'refuse', error: refusal }), { ifVersion: 7 }))).toBe(refusal);
      expect(calls.append).toBe(0);
    });

    it('writes each version at or after the one it follows when this clock is behind the head writer\'s', async () => {
      // Another replica, its clock 10 minutes ahead, wrote version 1; this one writes on it,
      // alone and in a batch, as a write request does (nextVersion stamps the attempt's now).
      const address = fresh();
      const ctx = { requestId: 'clock', namespace: address.namespace, agentId: 'tester' };
      const write = (n: number, at = address) => (view: HeadView) => nextVersion(ctx, at, { ...at, value: { n } }, view, contentHash({ n }));
      await appendVersion({ store: getStore(), now: () => Date.now() + 10 * 60_000 }, address, write(1));
      await appendVersion(deps(getStore()), address, write(2));
      // A batch's versions share one written_at (an export holds a batch wholly or not at all).
      const beside = { ...address, key: 'beside' };
      const batch = await appendVersions(deps(getStore()), [{ address: beside, decide: write(0, beside) }, { address, decide: write(3) }]);
      expect(batch[0]?.entry.written_at).toBe(batch[1]?.entry.written_at);
      const history = (await getStore().history(address, { limit: 10 })).reverse();
      expect(history.map((e) => e.value)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      for (const [i, next] of history.entries()) {
        const prev = history[i - 1];
        if (!prev) continue;
        expect(Date.parse(next.written_at)).toBeGreaterThanOrEqual(Date.parse(prev.written_at));
        // What an export checks of its own history, and an import of the archive.
        expect(followingProblem(prev, next)).toBeNull();
      }
    });

    it('gives up with a 409 after a bounded number of attempts when it never wins', async () => {
      const address = fresh();
      const { store, calls } = watched(getStore(), Number.POSITIVE_INFINITY);
      const error = await conflictOf(appendVersion(deps(store), address, appendValue(address, { mine: true })));
      expect(error.code).toBe('CONFLICT');
      expect(error.message).toContain('too many writers');
      // One read and one append per attempt, 16 attempts: the only retry loop there is.
      expect(calls).toMatchObject({ head: 16, append: 16 });
      expect((await getStore().head(address))?.value).toEqual({ competitor: 16 });
    });

    // A first attempt may build on the head the store holds without asking the backend
    // (Store.knownHead: S3's head index, which lags another replica's writes). Here that view
    // is version 1 while version 2 is stored, as another replica wrote it: the store must refuse
    // the version built on 1, and the write land on 2, exactly as if no guess had been made.
    const staleByOne = async () => {
      const address = fresh();
      const first = versionOf(address, 1, { n: 1 });
      await getStore().append(first, 0);
      await getStore().append(versionOf(address, 2, { n: 2 }), 1);
      return { address, first };
    };

    it('refuses a write built on a head the store held that is not the newest, and lands it on the newest', async () => {
      const { address, first } = await staleByOne();
      const { store, calls } = watched(getStore(), 0, () => first);
      const seen: Array<number | null> = [];
      const result = await appendVersion(deps(store), address, (view) => {
        seen.push(view.head?.version ?? null);
        return appendValue(address, { mine: true })(view);
      });
      expect(seen).toEqual([1, 2]);
      expect(result).toMatchObject({ created: true, entry: { version: 3, value: { mine: true } } });
      expect(calls).toMatchObject({ known: 1, head: 1, append: 2 });
      expect((await getStore().history(address, { limit: 10 })).map((e) => e.value)).toEqual([{ mine: true }, { n: 2 }, { n: 1 }]);
    });

    it('answers nothing to store, a refusal or a compare-and-set only on the newest head, never on one the store held', async () => {
      const { address, first } = await staleByOne();
      const { store, calls } = watched(getStore(), 0, () => first);
      // Unchanged on the held version 1, not on the stored version 2: written.
      const same = (view: HeadView): AppendDecision => ((view.head?.value as { n: number }).n === 1 ? { kind: 'unchanged', entry: view.head as Entry } : appendValue(address, { n: 1 })(view));
      expect(await appendVersion(deps(store), address, same)).toMatchObject({ created: true, entry: { version: 3, value: { n: 1 } } });
      // A compare-and-set on the stored version, which the held one does not match: written.
      const { store: again } = watched(getStore(), 0, () => first);
      expect(await appendVersion(deps(again), address, appendValue(address, { cas: 3 }), { ifVersion: 3 })).toMatchObject({ created: true, entry: { version: 4 } });
      // One the held version matches, and the stored one does not: refused, naming the stored one.
      const { store: stale } = watched(getStore(), 0, () => first);
      expect(await conflictOf(appendVersion(deps(stale), address, appendValue(address, { late: true }), { ifVersion: 1 }))).toMatchObject({ code: 'CONFLICT', message: 'entry is at version 4, not 1' });
      // A refusal given on the held version only: written.
      const { store: refusing } = watched(getStore(), 0, () => first);
      const refuseOne = (view: HeadView): AppendDecision => (view.head?.version === 1 ? { kind: 'refuse', error: new ServiceError('NOT_FOUND', 'gone') } : appendValue(address, { n: 5 })(view));
      expect(await appendVersion(deps(refusing), address, refuseOne)).toMatchObject({ created: true, entry: { version: 5 } });
      expect(calls.head).toBe(1);
      expect((await getStore().head(address))?.version).toBe(5);
    });

    it('refuses a batch built on a held head that is not the newest as a whole, and lands it on the newest', async () => {
      const { address, first } = await staleByOne();
      const beside = { ...address, key: 'beside' };
      // The held view has neither the newest version of `address` nor anything of `beside`, which is new.
      const { store, calls } = watched(getStore(), 0, (at) => (at.key === address.key ? first : null));
      const seen: Array<number | null> = [];
      const decide = (at: EntryAddress) => (view: HeadView) => {
        if (at.key === address.key) seen.push(view.head?.version ?? null);
        return appendValue(at, { batch: true })(view);
      };
      const results = await appendVersions(deps(store), [beside, address].map((at) => ({ address: at, decide: decide(at) })));
      expect(seen).toEqual([1, 2]);
      expect(results.map((r) => r.entry.version)).toEqual([1, 3]);
      expect(calls).toMatchObject({ known: 2, head: 2 });
      // Nothing of the refused attempt stands: `beside` has the one version of the second.
      expect((await getStore().history(beside, { limit: 10 })).map((e) => e.version)).toEqual([1]);
    });
  });
};
