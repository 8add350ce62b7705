import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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
      const status = await fetch(`${embedded.url}/api/v1/cortex/status`, { headers: { 'x-cairn-api-key': 'health-check-key-1' } });
      expect(await status.json()).toMatchObject({ status: 'active', queue_depth: 0 });
    } finally {
      await embedded.stop();
    }
    const gone = await runCairn(['cortex', '--health'], { CAIRN_DATA_DIR: dir, CAIRN_HTTP_URL: embedded.url });
    expect(gone.code).toBe(1);
  }, 60_000);
});
