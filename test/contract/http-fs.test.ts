import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeHttpContract } from './http-contract.ts';

const dirs: string[] = [];

describeHttpContract('filesystem', {
  async env() {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-http-fs-'));
    dirs.push(dir);
    return { CAIRN_DATA_DIR: dir, CAIRN_SSE_KEEPALIVE_MS: '200' };
  },
  async cleanup() {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  },
});
