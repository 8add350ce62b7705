import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import { VersionConflict } from '../../packages/server/src/domain/errors.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { describeAppendVersionContract } from './append-version-contract.ts';
import { describeAsOfContract } from './as-of-contract.ts';
import { describeBatchContract } from './batch-contract.ts';
import { describeLinksContract } from './links-contract.ts';
import { describeForgetContract } from './forget-contract.ts';
import { describeRecordExpiryContract } from './record-expiry-contract.ts';

/** What a backend's test file gives the contract: a fresh, empty store, and a way to reopen it. */
export interface StoreHarness {
  store: Store;
  /** Close the store and open a new instance over the same data (durability). */
  reopen(): Promise<Store>;
  cleanup(): Promise<void>;
  /** Every byte the backend holds (files, tables, objects), as text: forgotten values must be absent. */
  dump(): Promise<string>;
}

let counter = 0;
export const makeEntry = (overrides: Partial<Entry> = {}): Entry => {
  const now = new Date().toISOString();
  const value = overrides.value ?? { n: ++counter };
  return {
    namespace: 'default',
    entity_path: 'repos/acme/api',
    key: 'pr-1',
    version: 1,
    confidence: 1,
    agent_id: 'tester',
    event_type: null,
    memory_type: 'fact',
    shared: false,
    tags: [],
    provenance: {},
    created_at: now,
    written_at: now,
    expires_at: null,
    deleted: false,
    evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
    ...overrides,
    value,
    content_hash: contentHash(value),
  };
};

const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });

/** Write `count` versions of one entry, as a service would, and return the last. */
const writeVersions = async (store: Store, base: Partial<Entry>, count: number): Promise<Entry> => {
  let last = makeEntry({ ...base, version: 1 });
  for (let v = 1; v <= count; v++) {
    last = makeEntry({ ...base, version: v, value: { v } });
    await store.append(last, v - 1);
  }
  return last;
};

/**
 * The Store contract (src/ports/store.ts). Every backend runs this same suite; a backend is
 * done when it passes here, not when its own tests do.
 */
export const describeStoreContract = (name: string, open: () => Promise<StoreHarness>): void => {
  describe(`Store contract: ${name}`, () => {
    let h: StoreHarness;
    let store: Store;
    // Each test works in its own namespace so tests stay independent on a shared store.
    let ns = '';
    let nsCounter = 0;
    const nextNs = () => {
      ns = `ns${++nsCounter}-${Date.now()}`;
      return ns;
    };

    beforeAll(async () => {
      h = await open();
      store = h.store;
    });
    afterAll(async () => {
      await h?.cleanup();
    });

    it('appends a first version and reads it back as head and by number', async () => {
      const e = makeEntry({ namespace: nextNs(), value: { title: 'Fix retry storm', nested: { a: [1, 'ü'] } } });
      await store.append(e, 0);
      expect(await store.head(addr(e))).toEqual(e);
      expect(await store.version(addr(e), 1)).toEqual(e);
      expect(await store.version(addr(e), 2)).toBeNull();
      expect(await store.head({ ...addr(e), key: 'other' })).toBeNull();
    });

    it('keeps string values as strings', async () => {
      const e = makeEntry({ namespace: nextNs(), value: 'plain text ✓ with "quotes"\nand lines' });
      await store.append(e, 0);
      expect((await store.head(addr(e)))?.value).toBe('plain text ✓ with "quotes"\nand lines');
    });

    it('rejects an append whose expected head is stale, reporting the actual version', async () => {
      const last = await writeVersions(store, { namespace: nextNs() }, 2);
      const stale = makeEntry({ ...addr(last), version: 2 });
      const error = await store.append(stale, 1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VersionConflict);
      expect((error as VersionConflict).actual).toBe(2);
      const fresh = makeEntry({ ...addr(last), version: 1, key: 'new-key' });
      await expect(store.append(fresh, 3)).rejects.toBeInstanceOf(VersionConflict);
      expect((await store.head(addr(last)))?.version).toBe(2);
    });

    it('lets exactly one of two racing appends of the same version win', async () => {
      const base = { namespace: nextNs(), key: 'race' };
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => store.append(makeEntry({ ...base, version: 1, value: { i } }), 0)),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflict);
      expect(await store.history({ namespace: ns, entity_path: 'repos/acme/api', key: 'race' }, { limit: 10 })).toHaveLength(1);
    });

    it('returns history newest first, with limit and paging', async () => {
      const last = await writeVersions(store, { namespace: nextNs() }, 5);
      const all = await store.history(addr(last), { limit: 100 });
      expect(all.map((e) => e.version)).toEqual([5, 4, 3, 2, 1]);
      expect(all[4]?.value).toEqual({ v: 1 });
      expect((await store.history(addr(last), { limit: 2 })).map((e) => e.version)).toEqual([5, 4]);
      expect((await store.history(addr(last), { limit: 2, beforeVersion: 4 })).map((e) => e.version)).toEqual([3, 2]);
      expect(await store.history({ ...addr(last), key: 'never' }, { limit: 10 })).toEqual([]);
    });

    it('lists by segment-wise prefix in code point order with paging', async () => {
      const n = nextNs();
      const paths = ['repos/acme', 'repos/acme/api', 'repos/acme-corp/web', 'repos/acme/api/v2', 'repos/zeta', 'incidents/pd/checkout'];
      for (const p of paths) for (const k of ['b', 'a', 'k/with/slash', '𝒳', '\uE000']) {
        await store.append(makeEntry({ namespace: n, entity_path: p, key: k }), 0);
      }
      const page1 = await store.list({ namespace: n, prefix: 'repos/acme', limit: 4, now: Date.now() });
      expect(page1.entries.map((e) => `${e.entity_path}|${e.key}`)).toEqual([
        'repos/acme|a', 'repos/acme|b', 'repos/acme|k/with/slash', 'repos/acme|\uE000',
      ]);
      expect(page1.next).toEqual({ entity_path: 'repos/acme', key: '\uE000' });
      const rest = await store.list({ namespace: n, prefix: 'repos/acme', limit: 100, after: page1.next!, now: Date.now() });
      expect(rest.next).toBeNull();
      expect(rest.entries.map((e) => `${e.entity_path}|${e.key}`)).toEqual([
        'repos/acme|𝒳',
        'repos/acme/api|a', 'repos/acme/api|b', 'repos/acme/api|k/with/slash', 'repos/acme/api|\uE000', 'repos/acme/api|𝒳',
        'repos/acme/api/v2|a', 'repos/acme/api/v2|b', 'repos/acme/api/v2|k/with/slash', 'repos/acme/api/v2|\uE000', 'repos/acme/api/v2|𝒳',
      ]);
      const everything = await store.list({ namespace: n, limit: 1000, now: Date.now() });
      expect(everything.entries).toHaveLength(paths.length * 5);
      expect(everything.entries[0]?.entity_path).toBe('incidents/pd/checkout');
    });

    it('lists exactly `limit` entries with no next page when the store holds exactly that many', async () => {
      const n = nextNs();
      for (const k of ['a', 'b', 'c']) await store.append(makeEntry({ namespace: n, key: k }), 0);
      const page = await store.list({ namespace: n, limit: 3, now: Date.now() });
      expect(page.entries).toHaveLength(3);
      // A next position is allowed here only if following it yields nothing.
      if (page.next) expect((await store.list({ namespace: n, limit: 3, after: page.next, now: Date.now() })).entries).toEqual([]);
    });

    it('lists only live current versions, filtered by agent and time', async () => {
      const n = nextNs();
      const t0 = new Date(Date.now() - 60_000).toISOString();
      await store.append(makeEntry({ namespace: n, key: 'old', agent_id: 'a1', written_at: t0, created_at: t0 }), 0);
      await store.append(makeEntry({ namespace: n, key: 'new', agent_id: 'a2' }), 0);
      const v1 = makeEntry({ namespace: n, key: 'gone', agent_id: 'a1' });
      await store.append(v1, 0);
      await store.append(makeEntry({ ...addr(v1), version: 2, deleted: true, agent_id: 'a1' }), 1);
      await store.append(makeEntry({ namespace: n, key: 'expired', expires_at: new Date(Date.now() - 1000).toISOString() }), 0);
      await store.append(makeEntry({ namespace: n, key: 'later', expires_at: new Date(Date.now() + 60_000).toISOString() }), 0);
      const now = Date.now();
      const keys = async (q: { agentId?: string; since?: string }) =>
        (await store.list({ namespace: n, limit: 100, now, ...q })).entries.map((e) => e.key);
      expect(await keys({})).toEqual(['later', 'new', 'old']);
      expect(await keys({ agentId: 'a1' })).toEqual(['old']);
      expect(await keys({ since: new Date(now - 30_000).toISOString() })).toEqual(['later', 'new']);
      // Expiry is judged at the query's instant, not when the entry was written.
      expect((await store.list({ namespace: n, limit: 100, now: now + 120_000 })).entries.map((e) => e.key)).toEqual(['new', 'old']);
    });

    it('keeps namespaces apart', async () => {
      const a = nextNs();
      const b = `${a}-other`;
      await store.append(makeEntry({ namespace: a, key: 'shared-name', value: { ns: 'a' } }), 0);
      expect(await store.head({ namespace: b, entity_path: 'repos/acme/api', key: 'shared-name' })).toBeNull();
      expect((await store.list({ namespace: b, limit: 10, now: Date.now() })).entries).toEqual([]);
      await store.append(makeEntry({ namespace: b, key: 'shared-name', value: { ns: 'b' } }), 0);
      expect((await store.head({ namespace: a, entity_path: 'repos/acme/api', key: 'shared-name' }))?.value).toEqual({ ns: 'a' });
    });

    it('announces every appended version on the change feed', async () => {
      const n = nextNs();
      const seen: Entry[] = [];
      const stop = store.changes.subscribe((e) => {
        if (e.namespace === n) seen.push(e);
      });
      const last = await writeVersions(store, { namespace: n, key: 'fed' }, 3);
      await expect.poll(() => seen.length, { timeout: 5000 }).toBe(3);
      stop();
      expect(seen.map((e) => e.version)).toEqual([1, 2, 3]);
      expect(seen[2]).toEqual(last);
    });

    it('scans the current head of every entry in every namespace, tombstones and expired ones included', async () => {
      const [a, b] = [nextNs(), nextNs()];
      const twice = await writeVersions(store, { namespace: a, key: 'scan-twice' }, 2);
      const other = makeEntry({ namespace: b, key: 'scan-other' });
      await store.append(other, 0);
      const gone = makeEntry({ namespace: b, key: 'scan-gone' });
      await store.append(gone, 0);
      const tombstone = makeEntry({ namespace: b, key: 'scan-gone', version: 2, deleted: true });
      await store.append(tombstone, 1);
      const expired = makeEntry({ namespace: a, key: 'scan-expired', expires_at: new Date(Date.now() - 1000).toISOString() });
      await store.append(expired, 0);
      const seen = new Map<string, Entry>();
      for await (const head of store.scanHeads()) {
        if (head.namespace !== a && head.namespace !== b) continue;
        const id = `${head.namespace}/${head.key}`;
        expect(seen.has(id)).toBe(false);
        seen.set(id, head);
      }
      expect([...seen.keys()].sort()).toEqual([`${a}/scan-expired`, `${a}/scan-twice`, `${b}/scan-gone`, `${b}/scan-other`].sort());
      expect(seen.get(`${a}/scan-twice`)).toEqual(twice);
      expect(seen.get(`${b}/scan-gone`)).toEqual(tombstone);
      expect(seen.get(`${a}/scan-expired`)).toEqual(expired);
      expect(seen.get(`${b}/scan-other`)).toEqual(other);
      // Where the store holds its heads in memory, the plain walk gives the same heads in the same order.
      if (store.heldHeads) {
        const scanned: Entry[] = [];
        for await (const head of store.scanHeads()) scanned.push(head);
        expect([...(await store.heldHeads())]).toEqual(scanned);
      }
    });

    it('lists every namespace holding an entry, each once: tombstoned and expired ones included, forgotten ones not', async () => {
      const [a, b, c, d] = [nextNs(), nextNs(), nextNs(), nextNs()];
      await writeVersions(store, { namespace: a, key: 'ns-twice' }, 2);
      await store.append(makeEntry({ namespace: a, entity_path: 'other/path', key: 'ns-other' }), 0);
      await store.append(makeEntry({ namespace: b, key: 'ns-gone' }), 0);
      await store.append(makeEntry({ namespace: b, key: 'ns-gone', version: 2, deleted: true }), 1);
      await store.append(makeEntry({ namespace: c, key: 'ns-expired', expires_at: new Date(Date.now() - 1000).toISOString() }), 0);
      await store.append(makeEntry({ namespace: d, key: 'ns-forgotten' }), 0);
      await store.forget({ namespace: d, prefix: 'repos/acme/api' });
      const listed = await store.listNamespaces();
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed.filter((ns) => [a, b, c, d].includes(ns)).sort()).toEqual([a, b, c].sort());
    });

    it('answers ping while healthy', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('creates a record once: a second create leaves the first untouched', async () => {
      const c = `dedup/${nextNs()}/github`;
      expect(await store.createRecord(c, 'delivery-1', { entry: 'a' })).toBe(true);
      expect(await store.createRecord(c, 'delivery-1', { entry: 'b' })).toBe(false);
      const record = await store.getRecord(c, 'delivery-1');
      expect(record).toMatchObject({ id: 'delivery-1', data: { entry: 'a' } });
      expect(Date.parse(record!.updated_at)).not.toBeNaN();
      expect(await store.getRecord(c, 'delivery-2')).toBeNull();
      expect(await store.getRecord(`${c}-other`, 'delivery-1')).toBeNull();
    });

    it('lets exactly one of many racing creators of a record win', async () => {
      const c = `dedup/${nextNs()}`;
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.createRecord(c, 'same', { i })));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect((await store.getRecord(c, 'same'))?.data).toEqual({ i: winner });
    });

    it('answers each of many concurrent record reads, creates and deletes as if it ran alone', async () => {
      // Enough at once that a backend sharing statements among waiting operations (PostgreSQL:
      // record-ops.ts) puts several of each kind, repeats included, into one statement.
      const c = `dedup/${nextNs()}`;
      for (let i = 0; i < 5; i++) await store.createRecord(c, `old-${i}`, { old: i });
      const ids = [...Array.from({ length: 20 }, (_, i) => `new-${i}`), ...Array.from({ length: 5 }, (_, i) => `old-${i}`)];
      const creates = await Promise.all(ids.flatMap((id) => [0, 1, 2].map(async (copy) => ({ id, copy, created: await store.createRecord(c, id, { id, copy }) }))));
      for (const id of ids) {
        const winners = creates.filter((r) => r.id === id && r.created);
        expect(winners, id).toHaveLength(id.startsWith('new') ? 1 : 0);
        expect((await store.getRecord(c, id))?.data, id).toEqual(id.startsWith('new') ? { id, copy: winners[0]?.copy } : { old: Number(id.slice(4)) });
      }
      const asked = [...ids, ...ids, 'missing-1', 'missing-2'];
      const read = await Promise.all(asked.map((id) => store.getRecord(c, id)));
      read.forEach((record, i) => expect(record?.id ?? null, asked[i]).toBe(asked[i]!.startsWith('missing') ? null : asked[i]));
      const deletes = await Promise.all([...ids, ...ids, 'missing-1'].map(async (id) => ({ id, deleted: await store.deleteRecord(c, id) })));
      // Racing deletes of one record through one store: exactly one says it removed it.
      for (const id of ids) expect(deletes.filter((d) => d.id === id && d.deleted).length, id).toBe(1);
      expect(deletes.filter((d) => d.id === 'missing-1' && d.deleted)).toHaveLength(0);
      expect(await store.listRecords(c, { limit: 100 })).toEqual([]);
    });

    it('puts, deletes and lists records in id order', async () => {
      const c = `settings/${nextNs()}`;
      for (const id of ['b', 'a', 'with space/and slash', 'ü', '𝒳', '\uE000']) await store.putRecord(c, id, { id });
      await store.putRecord(c, 'a', { replaced: true });
      expect((await store.getRecord(c, 'a'))?.data).toEqual({ replaced: true });
      const all = await store.listRecords(c, { limit: 100 });
      expect(all.map((r) => r.id)).toEqual(['a', 'b', 'with space/and slash', 'ü', '\uE000', '𝒳']);
      expect((await store.listRecords(c, { limit: 2, after: 'b' })).map((r) => r.id)).toEqual(['with space/and slash', 'ü']);
      expect(await store.deleteRecord(c, 'b')).toBe(true);
      expect(await store.deleteRecord(c, 'b')).toBe(false);
      expect(await store.getRecord(c, 'b')).toBeNull();
      expect((await store.listRecords(c, { limit: 100 })).map((r) => r.id)).not.toContain('b');
      expect(await store.listRecords(`${c}-empty`, { limit: 10 })).toEqual([]);
    });

    it('keeps and lists long record ids (a retention policy of a long path, a digest of one) in id order', async () => {
      const c = `retention/${nextNs()}`;
      // Hex of 200, 202 and 600 characters, and 900 for CJK: around and past one key segment's worth.
      const ids = [`p:${'a'.repeat(98)}`, `p:${'a'.repeat(99)}`, `p:${'a'.repeat(99)}b`, `p:${'a'.repeat(298)}`, `p:${'b'.repeat(10)}`, '語'.repeat(150)];
      for (const id of [...ids].reverse()) expect(await store.createRecord(c, id, { id }), id.slice(0, 20)).toBe(true);
      for (const id of ids) expect((await store.getRecord(c, id))?.data, id.slice(0, 20)).toEqual({ id });
      const sorted = [...ids].sort((a, b) => (a < b ? -1 : 1));
      const listed = (await store.listRecords(c, { limit: 100 })).map((r) => r.id);
      expect(listed).toEqual(sorted);
      for (let i = 0; i < ids.length; i++) expect((await store.listRecords(c, { limit: 1, after: sorted[i] })).map((r) => r.id)).toEqual(sorted.slice(i + 1, i + 2));
      expect(await store.deleteRecord(c, `p:${'a'.repeat(99)}`)).toBe(true);
      expect((await store.listRecords(c, { limit: 100 })).map((r) => r.id)).toEqual(sorted.filter((id) => id !== `p:${'a'.repeat(99)}`));
    });

    it('keeps record ids of 300, 600, 2,000, 4,000 and 8,000 bytes (multi-byte too, sharing long heads, among short ones) and pages them in id order', async () => {
      // Ids come from entity paths (512 characters of up to 4 bytes, and a namespace): on S3 the
      // hex of one past about 450 bytes made a key over AWS's 1,024 bytes (the test proxy refuses
      // one, as AWS does); on PostgreSQL one past about 2.7 KB was over a btree entry's 2,704
      // bytes (SQLSTATE 54000), refused for good but answered "unavailable; retry shortly".
      const c = `retention/${nextNs()}`;
      const head = 'h'.repeat(400);
      // `bytes` hex digits, the same for the same seed (an id must be known again to be read).
      const hexOf = (bytes: number, seed: number) =>
        Array.from({ length: Math.ceil(bytes / 64) }, (_, i) => createHash('sha256').update(`${seed}/${i}`).digest('hex')).join('').slice(0, bytes);
      const ids = [
        'a', 'z', '\uE000', '𝒳',
        'p'.repeat(300), 'p'.repeat(600), 'p'.repeat(2000), `${'p'.repeat(600)}q`,
        'é'.repeat(150), '語'.repeat(200), '😀'.repeat(500), `${'語'.repeat(200)}😀`,
        // Sharing their first 319, 320 and 400 bytes: plain and long ids interleave in id order.
        'h'.repeat(319), 'h'.repeat(320), 'h'.repeat(350), head, `${head}a`, `${head}${'a'.repeat(599)}`, `${head}${'a'.repeat(600)}`,
        `${head}b`, `${head}${'b'.repeat(600)}`, `${head}${'c'.repeat(1600)}`, `${head}ü${'x'.repeat(700)}`, `${head}${'😀'.repeat(150)}`,
        `${'h'.repeat(319)}i${'x'.repeat(700)}`, `${'h'.repeat(319)}g${'x'.repeat(700)}`,
        // Past a btree entry (random-looking, so not compressed under it), sharing heads too.
        'p'.repeat(4000), 'p'.repeat(8000), `${'p'.repeat(4000)}q`, hexOf(4000, 1), hexOf(8000, 2), `${head}${hexOf(4000, 3)}`, `${head}${hexOf(4000, 4)}`,
        `${head}${'語'.repeat(1300)}`, '😀'.repeat(2000), `${'😀'.repeat(1999)}a`,
      ];
      const sorted = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      const label = (id: string) => `${id.slice(0, 12)}… (${Buffer.byteLength(id)} bytes)`;
      for (const id of [...ids].reverse()) expect(await store.createRecord(c, id, { id }), label(id)).toBe(true);
      for (const id of ids) {
        expect((await store.getRecord(c, id))?.data, label(id)).toEqual({ id });
        expect((await store.getRecord(c, id))?.id, label(id)).toBe(id);
        expect(await store.createRecord(c, id, { again: true }), label(id)).toBe(false);
      }
      // Near misses of long ids are other records.
      expect(await store.getRecord(c, `${head}${'a'.repeat(601)}`)).toBeNull();
      expect(await store.getRecord(c, 'p'.repeat(1999))).toBeNull();
      expect(await store.getRecord(c, 'p'.repeat(7999))).toBeNull();
      expect(await store.getRecord(c, `${hexOf(8000, 2).slice(0, -1)}g`)).toBeNull();
      expect((await store.listRecords(c, { limit: 100 })).map((r) => r.id)).toEqual(sorted);
      for (const limit of [1, 2]) {
        const paged: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.listRecords(c, { limit, ...(after === undefined ? {} : { after }) });
          expect(page.length, `page after ${after && label(after)}`).toBeLessThanOrEqual(limit);
          if (page.length === 0) break;
          paged.push(...page.map((r) => r.id));
          after = page.at(-1)!.id;
        }
        expect(paged.map(label), `pages of ${limit}`).toEqual(sorted.map(label));
      }
      // After an id that is not a record, too: the next ones in id order.
      expect((await store.listRecords(c, { limit: 2, after: `${head}${'a'.repeat(599)}0` })).map((r) => r.id)).toEqual([`${head}${'a'.repeat(600)}`, `${head}b`]);
      expect((await store.listRecords(c, { limit: 2, after: `${'h'.repeat(319)}h${'x'.repeat(700)}` })).map((r) => r.id)).toEqual([`${'h'.repeat(319)}i${'x'.repeat(700)}`, 'p'.repeat(300)]);
      // Replace, put and delete a long id in the middle of a group; racing creators of a new one.
      const long = `${head}${'a'.repeat(600)}`;
      expect(await store.replaceRecord(c, long, { id: 'other' }, { n: 1 })).toBe(false);
      expect(await store.replaceRecord(c, long, { id: long }, { n: 1 })).toBe(true);
      await store.putRecord(c, long, { n: 2 });
      expect((await store.getRecord(c, long))?.data).toEqual({ n: 2 });
      const racing = `${head}${'d'.repeat(900)}`;
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => store.createRecord(c, racing, { i })));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await store.getRecord(c, racing))?.data).toEqual({ i: results.indexOf(true) });
      const racingLong = `${head}${hexOf(6000, 5)}`;
      const racers = await Promise.all(Array.from({ length: 6 }, (_, i) => store.createRecord(c, racingLong, { i })));
      expect(racers.filter(Boolean)).toHaveLength(1);
      expect((await store.getRecord(c, racingLong))?.data).toEqual({ i: racers.indexOf(true) });
      const long8k = hexOf(8000, 2);
      expect(await store.replaceRecord(c, long8k, { id: 'other' }, { n: 1 })).toBe(false);
      expect(await store.replaceRecord(c, long8k, { id: long8k }, { n: 1 })).toBe(true);
      await store.putRecord(c, long8k, { n: 2 });
      expect((await store.getRecord(c, long8k))?.data).toEqual({ n: 2 });
      for (const id of [long, racing, racingLong, 'p'.repeat(2000), `${head}a`, 'p'.repeat(8000)]) {
        expect(await store.deleteRecord(c, id), label(id)).toBe(true);
        expect(await store.deleteRecord(c, id), label(id)).toBe(false);
        expect(await store.getRecord(c, id), label(id)).toBeNull();
      }
      const left = sorted.filter((id) => id !== long && id !== 'p'.repeat(2000) && id !== `${head}a` && id !== 'p'.repeat(8000));
      expect((await store.listRecords(c, { limit: 100 })).map((r) => r.id).map(label)).toEqual(left.map(label));
      expect((await store.listRecords(c, { limit: 3, after: `${head}` })).map((r) => r.id).map(label)).toEqual(
        left.slice(left.indexOf(head) + 1, left.indexOf(head) + 4).map(label),
      );
    });

    it('refuses a record over 16 MiB less 1 KiB (data, id and collection as JSON) on every backend, writing nothing, and keeps one of that size', async () => {
      const c = `big/${nextNs()}`;
      const max = 16 * 1024 * 1024 - 1024;
      const bytesOf = (id: string, data: unknown) => Buffer.byteLength(JSON.stringify(data)) + Buffer.byteLength(JSON.stringify(id)) + Buffer.byteLength(JSON.stringify(c));
      // Data making the record exactly `bytes` bytes: {"s":"…"} with `char` repeated.
      const sized = (id: string, bytes: number, char = 'x') => {
        const room = bytes - bytesOf(id, { s: '' });
        const n = Math.floor(room / Buffer.byteLength(char));
        return { s: char.repeat(n) + 'x'.repeat(room - n * Buffer.byteLength(char)) };
      };
      const refusal = (id: string, bytes: number) => ({
        code: 'PAYLOAD_TOO_LARGE',
        message: `record ${id} of ${c} is ${bytes} bytes as JSON with its id and collection; a record is at most ${max} bytes (16 MiB less 1 KiB)`,
      });
      expect(bytesOf('over', sized('over', max + 2, 'é'))).toBe(max + 2);
      expect(bytesOf('over', sized('over', 16 * 1024 * 1024 + 1))).toBe(16 * 1024 * 1024 + 1);
      await expect(store.createRecord(c, 'over', sized('over', max + 1))).rejects.toMatchObject(refusal('over', max + 1));
      await expect(store.putRecord(c, 'over', sized('over', 16 * 1024 * 1024 + 1))).rejects.toMatchObject(refusal('over', 16 * 1024 * 1024 + 1));
      // Counted in bytes: half as many characters of two bytes each.
      await expect(store.putRecord(c, 'over', sized('over', max + 2, 'é'))).rejects.toMatchObject(refusal('over', max + 2));
      expect(await store.getRecord(c, 'over')).toBeNull();
      await store.putRecord(c, 'small', { n: 0 });
      await expect(store.replaceRecord(c, 'small', { n: 0 }, sized('small', max + 1))).rejects.toMatchObject(refusal('small', max + 1));
      expect((await store.getRecord(c, 'small'))?.data).toEqual({ n: 0 });
      // At the limit: kept, read back, listed, and still there after a reopen.
      expect(await store.createRecord(c, 'max', sized('max', max))).toBe(true);
      expect(await store.replaceRecord(c, 'small', { n: 0 }, sized('small', max - 1, 'é'))).toBe(true);
      store = await h.reopen();
      expect(bytesOf('max', (await store.getRecord(c, 'max'))?.data)).toBe(max);
      expect((await store.getRecord(c, 'small'))?.data).toEqual(sized('small', max - 1, 'é'));
      expect((await store.listRecords(c, { limit: 10 })).map((r) => r.id)).toEqual(['max', 'small']);
      await store.deleteRecord(c, 'max');
      await store.deleteRecord(c, 'small');
    });

    it('replaces a record only while it holds what the replacer read, so racing increments all count', async () => {
      const c = `connector-stats/${nextNs()}`;
      expect(await store.replaceRecord(c, 'n', { n: 0 }, { n: 1 })).toBe(false);
      expect(await store.getRecord(c, 'n')).toBeNull();
      await store.putRecord(c, 'n', { n: 0, at: null });
      expect(await store.replaceRecord(c, 'n', { n: 1, at: null }, { n: 2, at: null })).toBe(false);
      expect((await store.getRecord(c, 'n'))?.data).toEqual({ n: 0, at: null });
      // Compared as JSON values: the order of keys does not matter.
      expect(await store.replaceRecord(c, 'n', { at: null, n: 0 }, { n: 0 })).toBe(true);
      expect((await store.getRecord(c, 'n'))?.data).toEqual({ n: 0 });
      const increment = async (): Promise<number> => {
        for (let tries = 1; ; tries++) {
          const n = (await store.getRecord(c, 'n'))?.data.n as number;
          if (await store.replaceRecord(c, 'n', { n }, { n: n + 1 })) return tries;
        }
      };
      const tries = await Promise.all(Array.from({ length: 12 }, increment));
      expect((await store.getRecord(c, 'n'))?.data).toEqual({ n: 12 });
      // Some lost a race and read again: the races were real, and each was refused.
      expect(Math.max(...tries)).toBeGreaterThan(1);
    });

    it('keeps every version across a reopen', async () => {
      const n = nextNs();
      const last = await writeVersions(store, { namespace: n, key: 'durable' }, 3);
      await store.append(makeEntry({ namespace: n, key: 'two', value: 'second' }), 0);
      await store.putRecord(`settings/${n}`, 'kept', { secret: 'x' });
      await store.putRecord(`settings/${n}`, 'dropped', { secret: 'y' });
      await store.deleteRecord(`settings/${n}`, 'dropped');
      store = await h.reopen();
      expect((await store.getRecord(`settings/${n}`, 'kept'))?.data).toEqual({ secret: 'x' });
      expect(await store.getRecord(`settings/${n}`, 'dropped')).toBeNull();
      expect(await store.head(addr(last))).toEqual(last);
      expect((await store.history(addr(last), { limit: 10 })).map((e) => e.version)).toEqual([3, 2, 1]);
      expect((await store.list({ namespace: n, limit: 10, now: Date.now() })).entries.map((e) => e.key)).toEqual(['durable', 'two']);
      await store.append(makeEntry({ ...addr(last), version: 4 }), 3);
      expect((await store.head(addr(last)))?.version).toBe(4);
    });

    describeAppendVersionContract(() => store);
    describeAsOfContract(() => store);
    describeRecordExpiryContract(() => store);
    describeLinksContract(
      () => store,
      async () => {
        store = await h.reopen();
        return store;
      },
    );
    describeForgetContract(
      () => store,
      async () => {
        store = await h.reopen();
        return store;
      },
      () => h.dump(),
    );
    describeBatchContract(
      () => store,
      async () => {
        store = await h.reopen();
        return store;
      },
    );
  });
};
