import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { httpCall } from '../helpers/http-call.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';
import { runCairn } from '../helpers/spawn-cortex.ts';

const dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-fs-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the Cortex on the filesystem backend', () => {
  it('refuses to run as a separate worker, and says to embed it', async () => {
    const refused = await runCairn(['cortex'], { CAIRN_DATA_DIR: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('cairn serve --with-cortex');
    expect(refused.stderr).toContain('CAIRN_DB_DSN');
  });

  it('--health asks the server named by CAIRN_HTTP_URL, healthy only while its embedded worker runs', async () => {
    const noUrl = await runCairn(['cortex', '--health'], { CAIRN_DATA_DIR: dir });
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toContain('CAIRN_HTTP_URL');

    const plain = await spawnCairn({ CAIRN_DATA_DIR: dir });
    // A namespace written while no Cortex ran: the one started next has never recorded it.
    for (let i = 0; i < 2; i++) expect((await httpCall(plain.url, 'POST', '/api/v1/entries', { namespace: 'early', entity_path: 'before/cortex', key: `k${i}`, value: { i } })).status).toBe(201);
    const withoutCortex = await runCairn(['cortex', '--health'], { CAIRN_DATA_DIR: dir, CAIRN_HTTP_URL: plain.url });
    expect(withoutCortex.code).toBe(1);
    expect(withoutCortex.stderr).toContain('stopped');
    await plain.stop();

    const keyed = { CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: 'health-check-key-1' };
    const embedded = await spawnCairn(keyed, ['--with-cortex']);
    try {
      const ok = await runCairn(['cortex', '--health'], { ...keyed, CAIRN_HTTP_URL: embedded.url });
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain('cortex active');
      let early: { summary: { entries: number } } | undefined;
      for (const deadline = Date.now() + 10_000; early === undefined && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
        const answer = await fetch(`${embedded.url}/api/v1/cortex/digests?namespace=early&scope=path:before/cortex`, { headers: { 'x-cairn-api-key': 'health-check-key-1' } });
        early = ((await answer.json()) as { digests: { summary: { entries: number } }[] }).digests[0];
      }
      expect(early?.summary.entries).toBe(2);
      const status = await fetch(`${embedded.url}/api/v1/cortex/status`, { headers: { 'x-cairn-api-key': 'health-check-key-1' } });
      expect(await status.json()).toMatchObject({ status: 'active', queue_depth: 0 });
    } finally {
      await embedded.stop();
    }
    const gone = await runCairn(['cortex', '--health'], { CAIRN_DATA_DIR: dir, CAIRN_HTTP_URL: embedded.url });
    expect(gone.code).toBe(1);
  }, 60_000);
});
