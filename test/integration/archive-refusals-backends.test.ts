import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { openFromEnv, snapshotOf } from '../helpers/archive-fixture.ts';

/**
 * Archives every backend once took differently: a history beginning past version 2^31 − 1
 * (PostgreSQL wrote 200 of 301 entries, then failed on its integer column; the filesystem padded
 * its index to the version and never opened again), and times of another form than
 * toISOString's (PostgreSQL normalized them, so a second import refused; year 0000 failed
 * half-way). Each is refused before anything is written, on every backend.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-refusals-backends-'));
const backends: Record<string, BackendEnv> = {
  filesystem: filesystemBackend('refusebk'),
  postgres: postgresBackend('refusebk'),
  s3: s3Backend('refusebk'),
};
afterAll(async () => {
  for (const backend of Object.values(backends)) await backend.cleanup();
  await rm(dir, { recursive: true, force: true });
});

const at = Date.now() - 60_000;
const versionOf = (key: string, version: number, i: number, patch: Partial<Entry> = {}): Entry => ({
  namespace: 'default', entity_path: 'notes/refused', key, value: { version }, version, confidence: 0.7, agent_id: 'a', event_type: null,
  memory_type: 'fact', shared: false, tags: [], provenance: {}, content_hash: contentHash({ version }), created_at: new Date(at).toISOString(),
  written_at: new Date(at + i * 1000).toISOString(), expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
  ...patch,
});

/** 300 ordinary entries (more than one store batch), then the entry `last`, as a whole archive. */
const archive = (last: Entry[]): string => {
  const header = { format: 'cairn-archive', version: 1, created_at: new Date().toISOString(), cut: new Date().toISOString(), namespaces: '*', source_backend: 'filesystem', cairn_version: '0' };
  const entries = [...Array.from({ length: 300 }, (_, k) => [versionOf(`ok-${k}`, 1, 0)]), last];
  const body = [header, ...entries.map((versions) => ({ type: 'entry', versions }))].map((l) => `${JSON.stringify(l)}\n`).join('');
  const trailer = { type: 'end', entries: entries.length, versions: entries.flat().length, records: 0, sha256: createHash('sha256').update(body).digest('hex') };
  return `${body}${JSON.stringify(trailer)}\n`;
};

const refused: [string, Entry[], RegExp][] = [
  ['a history beginning at version 3,000,000,000', [versionOf('huge', 3_000_000_000, 0), versionOf('huge', 3_000_000_001, 1)], /line 302: version 1: version: is above 2147483647/],
  ['a time without milliseconds', [versionOf('t', 1, 0, { written_at: '2026-01-01T00:00:00Z', created_at: '2026-01-01T00:00:00Z' })], /line 302: version 1: created_at: expected an ISO 8601 time in UTC as Cairn writes them/],
  ['a time with microseconds', [versionOf('t', 1, 0, { written_at: new Date(at).toISOString().replace('Z', '456Z') })], /line 302: version 1: written_at: expected an ISO 8601 time in UTC as Cairn writes them/],
  ['a time in year 0000', [versionOf('t', 1, 0, { written_at: '0000-01-01T00:00:00.000Z', created_at: '0000-01-01T00:00:00.000Z' })], /line 302: version 1: created_at: expected an ISO 8601 time in UTC as Cairn writes them/],
];

describe.each(Object.keys(backends))('cairn import into %s refuses what not every backend can hold', (name) => {
  let n = 0;
  for (const [what, last, message] of refused) {
    it(`refuses ${what}, writing nothing`, async () => {
      const path = join(dir, `${name}-${++n}.jsonl`);
      await writeFile(path, archive(last));
      const target = await openFromEnv(await (backends[name] as BackendEnv).env());
      try {
        const refusal = await importArchive(target.store, path).then(() => null, (error: Error) => error.message);
        expect(refusal).toMatch(message);
        expect(refusal).toMatch(/nothing was imported/);
        expect((await snapshotOf(target.store, ['default'])).size).toBe(0);
      } finally {
        await target.store.close();
      }
    }, 60_000);
  }
});
