import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { seedIncidents } from '../helpers/cortex-incidents.ts';
import { readSse } from '../helpers/sse.ts';

/**
 * /api/v1/cortex/stream filters every event by `scope` and `type` as the digests are: a scoped
 * stream gets the patterns on paths under its scope and the traces with a link there (it got
 * none), and a digest's removal goes to the streams that would have got the digest (it went to
 * every scope, and to no stream with a `type`).
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-stream-filters-'));
let cairn: Cairn;
beforeAll(async () => {
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_CORTEX_DEBOUNCE_MS: '100', CAIRN_SSE_KEEPALIVE_MS: '200' }, { withCortex: true });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

type Stream = Awaited<ReturnType<typeof readSse>>;
const seen = (stream: Stream, event: string): unknown[] => stream.all().filter((e) => e.event === event).map((e) => JSON.parse(e.data));
const scopesRemoved = (stream: Stream): string[] => (seen(stream, 'digest_removed') as Array<{ scope: string }>).map((d) => d.scope);

it('filters patterns, traces and removals by the stream scope and type', async () => {
  const queries = ['', 'scope=incidents', 'scope=repos/acme', 'scope=people', 'scope=path:people/alice', 'type=generic', 'type=incidents'];
  const streams = new Map<string, Stream>();
  for (const q of queries) streams.set(q, await readSse(`${cairn.url}/api/v1/cortex/stream?${q}`));
  const s = (q: string): Stream => streams.get(q) as Stream;
  try {
    await seedIncidents(cairn.call, 'filters');
    await expect.poll(() => seen(s(''), 'trace').length, { timeout: 30_000 }).toBeGreaterThan(0);
    await expect.poll(() => seen(s(''), 'pattern').length, { timeout: 30_000 }).toBeGreaterThan(0);
    const patterns = seen(s(''), 'pattern') as Array<{ entity_path: string }>;
    expect(patterns.some((p) => p.entity_path.startsWith('incidents/'))).toBe(true);
    // Patterns on incidents/…, traces from repos/acme/checkout to incidents/pagerduty/checkout.
    await expect.poll(() => seen(s('scope=incidents'), 'pattern').length, { timeout: 5_000 }).toBe(patterns.filter((p) => p.entity_path.startsWith('incidents/')).length);
    await expect.poll(() => seen(s('scope=incidents'), 'trace').length, { timeout: 5_000 }).toBe(seen(s(''), 'trace').length);
    await expect.poll(() => seen(s('scope=repos/acme'), 'trace').length, { timeout: 5_000 }).toBe(seen(s(''), 'trace').length);

    // Its digest first: a delete compiled together with the note's write (a loaded machine) leaves no digest to remove.
    await expect.poll(() => (seen(s(''), 'digest') as Array<{ scope: string }>).some((d) => d.scope === 'path:people/alice'), { timeout: 30_000 }).toBe(true);
    expect((await cairn.call('DELETE', '/api/v1/entries/people/alice/note')).status).toBe(204);
    await expect.poll(() => scopesRemoved(s('')), { timeout: 30_000 }).toContain('path:people/alice');
    await expect.poll(() => scopesRemoved(s('scope=people')), { timeout: 5_000 }).toEqual(['path:people/alice']);
    await expect.poll(() => scopesRemoved(s('scope=path:people/alice')), { timeout: 5_000 }).toEqual(['path:people/alice']);
    await expect.poll(() => scopesRemoved(s('type=generic')), { timeout: 5_000 }).toEqual(['path:people/alice']);
    await new Promise((r) => setTimeout(r, 500));

    expect(scopesRemoved(s('scope=incidents'))).toEqual([]);
    expect(scopesRemoved(s('scope=repos/acme'))).toEqual([]);
    expect(scopesRemoved(s('type=incidents'))).toEqual([]);
    expect(seen(s('scope=repos/acme'), 'pattern').filter((p) => !(p as { entity_path: string }).entity_path.startsWith('repos/acme'))).toEqual([]);
    expect(seen(s('scope=people'), 'pattern')).toEqual([]);
    expect(seen(s('scope=people'), 'trace')).toEqual([]);
    expect(seen(s('scope=path:people/alice'), 'trace')).toEqual([]);
  } finally {
    for (const stream of streams.values()) stream.close();
  }
}, 60_000);
