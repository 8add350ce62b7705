import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startCairn } from '../helpers/cairn.ts';
import { cortexAnswers, digestScopes, P1, seedIncidents, traceIds } from '../helpers/cortex-incidents.ts';

/**
 * A forget removes what the Cortex compiled from the forgotten entries and nothing else: the
 * purge matches entity paths by segment (`people/al` is not `people/alice`) and, given a key,
 * only records quoting that entry; and the worker rebuilds, from the entries left, whatever
 * the purge took that still derives from them (the incidents digest, the roll-ups).
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-forget-scope-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

it('forgets one incident and a path prefix without losing what the other entries derive', async () => {
  const cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_CORTEX_DEBOUNCE_MS: '100' }, { withCortex: true });
  try {
    const word = `narwhal${Date.now().toString(36)}`;
    await seedIncidents(cairn.call, word);
    const checkout = 'failed_deploy_then_incident:incidents/pagerduty/checkout:incident-';
    await expect.poll(() => traceIds(cairn.call), { timeout: 15_000, interval: 100 }).toEqual([`${checkout}P1`, `${checkout}P2`, `${checkout}P3`]);
    await expect.poll(() => digestScopes(cairn.call), { timeout: 15_000, interval: 100 }).toContain('path:people/alice');
    const scopes = await digestScopes(cairn.call);
    expect(await cortexAnswers(cairn.call)).toContain(word);

    const one = await cairn.call('POST', '/api/v1/admin/forget', P1);
    expect(one.status).toBe(200);
    // Nothing quotes P1 once the forget has answered...
    expect(await cortexAnswers(cairn.call)).not.toContain(word);
    // ...and the records derived from the entries left are all there again: P2's and P3's
    // traces were never theirs to lose, the incidents digest and roll-ups come back rebuilt.
    await expect.poll(() => digestScopes(cairn.call), { timeout: 10_000, interval: 100 }).toEqual(scopes);
    expect(await traceIds(cairn.call)).toEqual([`${checkout}P2`, `${checkout}P3`]);
    const incidents = (await cairn.call('GET', '/api/v1/cortex/digests?scope=path:incidents/pagerduty/checkout')).body.digests[0];
    expect(incidents.summary.keys.sort()).toEqual(['incident-P2', 'incident-P3']);
    expect(await cortexAnswers(cairn.call)).not.toContain(word);

    // A prefix is a whole segment: forgetting people/al (nothing there) keeps people/alice.
    const prefix = await cairn.call('POST', '/api/v1/admin/forget', { entity_path: 'people/al' });
    expect(prefix.body).toEqual({ forgotten: [], derived_removed: 0 });
    expect(await digestScopes(cairn.call)).toEqual(scopes);
    expect((await cairn.call('GET', '/api/v1/cortex/digests?scope=path:people/alice')).body.digests).toHaveLength(1);
  } finally {
    await cairn.close();
  }
}, 60_000);
