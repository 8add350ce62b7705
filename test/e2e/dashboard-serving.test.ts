import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * How the server serves the dashboard's files: public (no key) while the API still needs
 * one, precompressed, cached for a year when the name is a content hash and revalidated
 * otherwise, never a way out of dist/.
 */
const KEY = 'dashboard-serving-key-0123';
let cairn: Cairn;
let dir: string;
let asset: string;

beforeAll(async () => {
  asset = (await readdir(join(import.meta.dirname, '../../packages/server/dashboard/dist/assets'))).find((f) => f.endsWith('.js')) as string;
  dir = await mkdtemp(join(tmpdir(), 'cairn-dash-serving-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: KEY });
}, 120_000);
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(cairn.url + path, { headers, redirect: 'manual' });

describe('dashboard files', () => {
  it('redirects / to /dashboard/', async () => {
    const res = await get('/');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/dashboard/');
  });

  it('serves index.html without a key, revalidated on every visit, with a strict CSP', async () => {
    for (const path of ['/dashboard', '/dashboard/']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(await res.text()).toContain('<div id="app">');
    }
    // The API itself still needs the key.
    expect((await get('/api/v1/entries')).status).toBe(401);
  });

  it('sends brotli or gzip as the browser accepts, and caches hashed assets for a year', async () => {
    const br = await get(`/dashboard/assets/${asset}`, { 'accept-encoding': 'br, gzip' });
    expect(br.status).toBe(200);
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(br.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(br.headers.get('x-content-type-options')).toBe('nosniff');
    expect(br.headers.get('content-type')).toMatch(/javascript/);
    const gz = await get(`/dashboard/assets/${asset}`, { 'accept-encoding': 'gzip' });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    const index = await get('/dashboard/', { 'accept-encoding': 'gzip, deflate, br' });
    expect(index.headers.get('content-encoding')).toBe('br');
    expect(index.headers.get('vary')).toMatch(/accept-encoding/i);
  });

  it('is a lean production build', async () => {
    const file = join(import.meta.dirname, '../../packages/server/dashboard/dist/assets', asset);
    // Preact's development JSX runtime records file names and line numbers; production does not.
    expect(await readFile(file, 'utf8')).not.toContain('lineNumber');
    expect((await stat(`${file}.br`)).size).toBeLessThan(40 * 1024);
  });

  it('says whether a key is needed, and nothing more', async () => {
    const res = await get('/dashboard/auth.json');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ key_required: true });
  });

  it('answers 404 for missing files and never serves outside dist/', async () => {
    expect((await get('/dashboard/assets/nope.js')).status).toBe(404);
    for (const path of ['/dashboard/%2e%2e/%2e%2e/package.json', '/dashboard/..%2f..%2fpackage.json', '/dashboard/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json']) {
      const res = await get(path);
      // 401: the router resolved the dots to a path outside /dashboard, which is not public.
      expect([400, 401, 403, 404], path).toContain(res.status);
      expect(await res.text(), path).not.toContain('"name": "cairn"');
    }
  });

  it('keeps every dashboard route public and out of the OpenAPI document', async () => {
    const routes = cairn.server.app.routeTable.filter((r) => r.url === '/' || r.url.startsWith('/dashboard'));
    expect(routes.length).toBeGreaterThanOrEqual(4);
    expect(routes.every((r) => r.public && r.method === 'GET')).toBe(true);
    const spec = (await (await get('/api/v1/openapi.json', { 'x-cairn-api-key': KEY })).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths).filter((p) => p === '/' || p.startsWith('/dashboard'))).toEqual([]);
  });
});
