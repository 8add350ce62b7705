import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

// Hashed assets are kept a year by browsers and CDNs. A 404 for one (a page of the next release
// asking a replica still on this one, mid-upgrade) carried the same header, and Chromium kept
// the 404: that browser's dashboard stayed blank after the upgrade.
describe('dashboard caching', () => {
  let cairn: Cairn;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-dashboard-cache-'));
    cairn = await startCairn({ CAIRN_DATA_DIR: dir });
  });
  afterAll(async () => {
    await cairn?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps an asset a year, and never a miss', async () => {
    const page = await (await fetch(`${cairn.url}/dashboard/`)).text();
    const asset = /assets\/[^"]+\.js/.exec(page)?.[0];
    expect(asset).toBeDefined();
    const found = await fetch(`${cairn.url}/dashboard/${asset}`);
    expect(found.status).toBe(200);
    expect(found.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    for (const missing of ['/dashboard/assets/index-00000000.js', '/dashboard/assets/', '/dashboard/nosuch.png']) {
      const res = await fetch(cairn.url + missing);
      expect(res.status, missing).toBe(404);
      expect(res.headers.get('cache-control'), missing).toBe('no-store');
    }
  });
});
