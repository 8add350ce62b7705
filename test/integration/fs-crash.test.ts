import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';

/**
 * Kill -9 the filesystem server at random moments under concurrent writes, restart it, and
 * check that every acknowledged write is there with its exact content, and that no entry
 * is half-written (every version readable, versions contiguous).
 */
const CYCLES = 20;
const WRITERS = 8;

const dir = await mkdtemp(join(tmpdir(), 'cairn-crash-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

interface Acked {
  key: string;
  version: number;
  seq: number;
}

const historyOf = async (url: string, key: string): Promise<Map<number, { seq: number }>> => {
  const versions = new Map<number, { seq: number }>();
  let before: number | null = null;
  do {
    const res = await fetch(`${url}/api/v1/history/crash/${key}?limit=1000${before ? `&before=${before}` : ''}`);
    expect(res.status, `history of ${key}`).toBe(200);
    const body = (await res.json()) as { versions: Array<{ version: number; value: { seq: number } }>; next_before: number | null };
    for (const v of body.versions) versions.set(v.version, v.value);
    before = body.next_before;
  } while (before);
  return versions;
};

it(`loses no acknowledged write across ${CYCLES} SIGKILL cycles`, async () => {
  const acked: Acked[] = [];
  let totalAcked = 0;
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const server: CairnProcess = await spawnCairn({ CAIRN_DATA_DIR: dir });
    // Everything acknowledged before this restart must be present, exactly.
    const keys = [...new Set(acked.map((a) => a.key))];
    const histories = new Map(await Promise.all(keys.map(async (k) => [k, await historyOf(server.url, k)] as const)));
    for (const a of acked) {
      expect(histories.get(a.key)?.get(a.version)?.seq, `${a.key} v${a.version} after cycle ${cycle}`).toBe(a.seq);
    }
    for (const [key, h] of histories) {
      const versions = [...h.keys()].sort((x, y) => x - y);
      expect(versions, `versions of ${key} are contiguous`).toEqual(versions.map((_, i) => i + 1));
    }

    let stop = false;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      const key = `c${cycle}-w${w}`;
      for (let seq = 0; !stop; seq++) {
        const padding = 'x'.repeat(Math.floor(Math.random() * 4000));
        try {
          const res = await fetch(`${server.url}/api/v1/entries`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ entity_path: 'crash', key, value: { seq, padding } }),
          });
          if (res.status !== 201) throw new Error(`unexpected ${res.status}`);
          const body = (await res.json()) as { entry: { version: number } };
          acked.push({ key, version: body.entry.version, seq });
          totalAcked += 1;
        } catch {
          return; // the server died mid-request: this write was never acknowledged
        }
      }
    });
    await new Promise((r) => setTimeout(r, 150 + Math.random() * 600));
    server.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await server.exited;
  }
  console.log(`crash test: ${totalAcked} acknowledged writes over ${CYCLES} SIGKILL cycles, all found intact`);
  expect(totalAcked).toBeGreaterThan(CYCLES * WRITERS);
}, 240_000);
