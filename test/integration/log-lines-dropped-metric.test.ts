import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogDestination } from '../../packages/server/src/http/logger.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

const dropped = (metrics: string): number => {
  const line = /^cairn_log_lines_dropped_total (\d+)$/m.exec(metrics);
  if (!line) throw new Error('cairn_log_lines_dropped_total is not on /metrics');
  return Number(line[1]);
};

describe('log lines dropped on /metrics', () => {
  let dir: string;
  let cairn: Cairn;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-log-dropped-'));
    cairn = await startCairn({ CAIRN_DATA_DIR: dir });
  });
  afterAll(async () => {
    await cairn.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('counts the lines a destination could not write (a full disk: /dev/full answers ENOSPC), and follows the count', async () => {
    const before = dropped((await cairn.call('GET', '/metrics')).body as string);
    const fd = openSync('/dev/full', 'w');
    try {
      const destination = new LogDestination(fd);
      destination.write('{"msg":"one"}\n');
      destination.write('{"msg":"two"}\n');
      await new Promise<void>((resolve) => destination.flush(() => resolve()));
      expect(dropped((await cairn.call('GET', '/metrics')).body as string)).toBe(before + 2);
      destination.write('{"msg":"three"}\n');
      await new Promise<void>((resolve) => destination.flush(() => resolve()));
      expect(dropped((await cairn.call('GET', '/metrics')).body as string)).toBe(before + 3);
    } finally {
      closeSync(fd);
    }
  });
});
