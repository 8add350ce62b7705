import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeClientContract } from './client-contract.ts';

const dirs: string[] = [];

describeClientContract('filesystem', {
  async env() {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-client-fs-'));
    dirs.push(dir);
    return { CAIRN_DATA_DIR: dir, CAIRN_SSE_KEEPALIVE_MS: '200' };
  },
  async cleanup() {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  },
});
