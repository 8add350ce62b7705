import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { exportDefaultTo, openFromEnv, versionOf } from '../helpers/archive-fixture.ts';

/**
 * The archive's cut on every backend, with batches written while the export runs: each
 * batch (one value on two entries, one written_at) is in the archive on both or on neither,
 * nothing written after the cut is in it, and every batch acknowledged before the cut is.
 */
const backends: Record<string, BackendEnv> = { filesystem: filesystemBackend('cut'), postgres: postgresBackend('cut'), s3: s3Backend('cut') };
const dir = await mkdtemp(join(tmpdir(), 'cairn-cut-'));
afterAll(async () => {
  for (const b of Object.values(backends)) await b.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe('an export taken while batches are written', () => {
  for (const [name, backend] of Object.entries(backends)) {
    it(`holds whole batches up to its cut (${name})`, async () => {
      const { store } = await openFromEnv(await backend.env());
      try {
        // Entries the export has to walk past, so it is still reading while the writers go on.
        for (let i = 0; i < 300; i += 50) {
          await store.appendBatch(Array.from({ length: 50 }, (_, j) => ({ entry: versionOf({ namespace: 'default', entity_path: 'bulk', key: `b${i + j}` }, 1, { at: Date.now() }), expectedHead: 0 })));
        }
        const acked: number[] = [];
        let stop = false;
        const writer = (async () => {
          for (let n = 1; !stop && n < 100_000; n++) {
            const at = Date.now();
            const stamp = new Date(at).toISOString();
            await store.appendBatch(['a', 'b'].map((key) => ({
              entry: { ...versionOf({ namespace: 'default', entity_path: 'pairs', key }, n, { at, value: { n } }), written_at: stamp, created_at: stamp },
              expectedHead: n - 1,
            })));
            acked.push(Date.now());
          }
        })();
        await new Promise((resolve) => setTimeout(resolve, 300));
        const file = join(dir, `${name}.jsonl`);
        await exportDefaultTo(store, file, 200);
        await new Promise((resolve) => setTimeout(resolve, 200));
        stop = true;
        await writer;

        const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { cut?: string; type?: string; versions?: Entry[] });
        const cut = Date.parse(lines[0]?.cut as string);
        const pairs = new Map<string, number[]>();
        for (const line of lines.filter((l) => l.type === 'entry')) {
          const versions = line.versions as Entry[];
          // Whole histories: versions 1..n, even of an entry that grew while the export read it.
          expect(versions.map((v) => v.version)).toEqual(versions.map((_, i) => i + 1));
          for (const v of versions) expect(Date.parse(v.written_at)).toBeLessThanOrEqual(cut);
          if (versions[0]?.entity_path === 'pairs') pairs.set(versions[0].key, versions.map((v) => (v.value as { n: number }).n));
        }
        expect(pairs.get('a')).toEqual(pairs.get('b'));
        expect(pairs.get('a')?.length ?? 0).toBeGreaterThanOrEqual(acked.filter((at) => at <= cut).length);
        // Writes went on after the cut, and the archive left them out.
        expect(acked.length).toBeGreaterThan(pairs.get('a')?.length ?? 0);
      } finally {
        await store.close();
      }
    }, 60_000);
  }
});
