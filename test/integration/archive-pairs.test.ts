import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportArchive } from '../../packages/server/src/services/archive/export-archive.ts';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { AUDIT_COLLECTIONS } from '../../packages/server/src/services/audit-log.ts';
import { DEDUP_COLLECTIONS } from '../../packages/server/src/services/retention/dedup-collections.ts';
import { HISTORY_PAGE } from '../../packages/server/src/services/archive/export-history.ts';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { fillLongHistories, fillStore, openFromEnv, snapshotOf } from '../helpers/archive-fixture.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';

/**
 * Export from each backend, import into each backend (nine pairs): the stores compare equal
 * entry by entry and version by version, records included, and a second import changes nothing.
 * Two histories are longer than one line holds (a small line budget stands in for the real
 * one, which takes half a gigabyte to reach): they go over several lines and come back whole.
 */
const NAMESPACES = ['acme', 'beta'];
/**
 * The long histories: each just over one page of an export's reads once pruned, which is all
 * the pairs need of them (archive-long-history.test.ts reads longer ones page by page). Each
 * version imported into S3 is two writes (its version object and its change object), and the
 * pairs into S3 import every version twice over: longer histories cost them seconds each.
 */
const LONG = { versions: 140, dropped: 30 };
/** About twenty of the long histories' versions per line. */
const LINE_CHARS = 16 * 1024;
const ENTRIES = 24 + 2;
const VERSIONS = 42 + LONG.versions + (LONG.versions - LONG.dropped);
const backends: Record<string, BackendEnv> = {
  filesystem: filesystemBackend('archive'),
  postgres: postgresBackend('archive'),
  s3: s3Backend('archive'),
};
const archives = new Map<string, { path: string; snapshot: Map<string, string> }>();
let dir = '';

beforeAll(async () => {
  expect(LONG.versions - LONG.dropped).toBeGreaterThan(HISTORY_PAGE);
  dir = await mkdtemp(join(tmpdir(), 'cairn-archives-'));
  for (const [name, env] of Object.entries(backends)) {
    const source = await openFromEnv(await env.env());
    await fillStore(source.store, NAMESPACES);
    await fillLongHistories(source.store, 'acme', LONG);
    const path = join(dir, `${name}.jsonl`);
    const out = createWriteStream(path);
    // Read ahead on every backend (the filesystem reads one at a time when served): the archive is the same either way.
    const trailer = await exportArchive(source.store, out, { namespaces: '*', now: Date.now, settleMs: 20, entryLineChars: LINE_CHARS, readsOverNetwork: true });
    out.end();
    await finished(out);
    expect(trailer).toMatchObject({ entries: ENTRIES, versions: VERSIONS });
    // Each long history is an entry line and continuations, versions k..n in order; every other entry is one line.
    const lines = (await readFile(path, 'utf8')).trim().split('\n').slice(1, -1).map((l) => JSON.parse(l) as { type: string; versions?: Entry[] });
    const continued = lines.filter((l) => l.type === 'entry-continued');
    expect(continued.length).toBeGreaterThan(10);
    for (const key of ['whole', 'pruned']) {
      const mine = lines.flatMap((l, i) => (l.versions?.[0]?.entity_path === 'long/history' && l.versions[0].key === key ? [i] : []));
      expect(mine.map((i) => lines[i]?.type)).toEqual(['entry', ...Array(mine.length - 1).fill('entry-continued')]);
      expect(mine).toEqual(mine.map((_, j) => (mine[0] as number) + j));
      const first = key === 'whole' ? 1 : LONG.dropped + 1;
      expect(mine.flatMap((i) => lines[i]?.versions?.map((v) => v.version))).toEqual(Array.from({ length: LONG.versions - first + 1 }, (_, j) => first + j));
    }
    archives.set(name, { path, snapshot: await snapshotOf(source.store, NAMESPACES) });
    await source.store.close();
  }
}, 120_000);

afterAll(async () => {
  for (const env of Object.values(backends)) await env.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe('export from every backend, import into every backend', () => {
  for (const from of Object.keys(backends)) {
    for (const to of Object.keys(backends)) {
      it(`${from} → ${to}`, async () => {
        const { path, snapshot } = archives.get(from) as { path: string; snapshot: Map<string, string> };
        const targetEnv = await (backends[to] as BackendEnv).env();
        const target = await openFromEnv(targetEnv);
        try {
          const first = await importArchive(target.store, path);
          expect(first.entries_written).toBe(ENTRIES);
          expect(first.versions_written).toBe(VERSIONS);
          // Expiry finds dedup and audit collections through lists of them: imported ones join.
          for (const ns of NAMESPACES) {
            expect(await target.store.getRecord(AUDIT_COLLECTIONS, `audit/${ns}`), ns).not.toBeNull();
            expect(await target.store.getRecord(DEDUP_COLLECTIONS, `dedup/${ns}/github`), ns).not.toBeNull();
          }
          const copy = await snapshotOf(target.store, NAMESPACES);
          expect([...copy.keys()].sort()).toEqual([...snapshot.keys()].sort());
          for (const [k, v] of snapshot) expect(copy.get(k), k).toBe(v);
          const again = await importArchive(target.store, path);
          expect(again.versions_written).toBe(0);
          expect(again.entries_present).toBe(ENTRIES);
        } finally {
          await target.store.close();
        }
        // Read back after a restart (the filesystem replays its log), and written on as usual.
        const reopened = await openFromEnv(targetEnv);
        try {
          const copy = await snapshotOf(reopened.store, NAMESPACES);
          for (const [k, v] of snapshot) expect(copy.get(k), k).toBe(v);
          const pruned = { namespace: 'acme', entity_path: 'logs/app', key: 'pruned' };
          expect((await reopened.store.history(pruned, { limit: 10 })).map((v) => v.version)).toEqual([4, 3]);
          const next = { ...((await reopened.store.head(pruned)) as Entry), version: 5, written_at: new Date().toISOString() };
          await reopened.store.append(next, 4);
          expect((await reopened.store.head(pruned))?.version).toBe(5);
        } finally {
          await reopened.store.close();
        }
      }, 60_000);
    }
  }
});
