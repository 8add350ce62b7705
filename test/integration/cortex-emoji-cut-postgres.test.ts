import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresBackend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * Digests and briefings quote text cut to a length. Cut between the two halves of an emoji,
 * the half left has no UTF-8 form: PostgreSQL refused every digest record holding one, so one
 * such value stopped the Cortex for good, and briefings on every backend answered the half.
 */
const backend = postgresBackend('cortex_emoji');
let cairn: Cairn;
beforeAll(async () => {
  cairn = await startCairn({ ...(await backend.env()), CAIRN_CORTEX_DEBOUNCE_MS: '100' }, { withCortex: true });
});
afterAll(async () => {
  await cairn?.close();
  await backend.cleanup();
});

const wellFormed = (value: unknown): boolean => JSON.stringify(value).isWellFormed() && !/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i.test(JSON.stringify(value));

it('cuts quoted text between characters, so an emoji at the cut neither stops the Cortex nor reaches an answer halved', async () => {
  // shortText keeps 119 characters and an ellipsis: the emoji's first half is the 119th.
  const value = `${'a'.repeat(118)}😀 and a tail`;
  expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'notes/x', key: 'emoji', value })).status).toBe(201);
  // A title cut at 200 characters the same way (an incident digest's title).
  const title = `${'t'.repeat(199)}😀 tail`;
  expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'incidents/pagerduty/db', key: 'incident-E1', value: { id: 'E1', title, status: 'triggered' } })).status).toBe(201);

  const digest = async (scope: string) => (await cairn.call('GET', `/api/v1/cortex/digests?scope=${scope}`)).body?.digests?.[0];
  await expect.poll(() => digest('path:incidents/pagerduty/db'), { timeout: 20_000, interval: 200 }).toBeTruthy();
  await expect.poll(() => digest('path:notes/x'), { timeout: 20_000, interval: 200 }).toBeTruthy();
  const status = await cairn.call('GET', '/api/v1/cortex/status');
  expect(status.body.failing).toBeNull();
  const incident = await digest('path:incidents/pagerduty/db');
  expect(incident.facts.incidents[0].title).toBe(`${'t'.repeat(199)}…`);
  expect(wellFormed(incident)).toBe(true);

  const briefing = await cairn.call('GET', '/api/v1/briefing?entity_path=notes');
  expect(briefing.status).toBe(200);
  expect(wellFormed(briefing.body)).toBe(true);
  expect(JSON.stringify(briefing.body)).toContain(`${'a'.repeat(118)}…`);
}, 60_000);
