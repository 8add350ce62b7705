import { describe, expect, it } from 'vitest';
import type { Digest } from '../../packages/server/src/cortex/digest-types.ts';
import type { IncidentRef } from '../../packages/server/src/cortex/digests/incident-ref.ts';
import { NamespaceState } from '../../packages/server/src/cortex/namespace-state.ts';

/**
 * Two incident paths can name one PagerDuty id (the same incident under two services). The
 * open incident a chat thread links to must not depend on which path compiled last: the one
 * updated last answers, ties by path.
 */
const ref = (entity_path: string, fields: Partial<IncidentRef> = {}): IncidentRef => ({
  entity_path, key: 'incident-PX1', version: 1, id: 'PX1', title: `down (${entity_path})`, status: 'triggered', service: entity_path.split('/').at(-1) ?? '',
  urgency: 'high', assignees: [], triggered_at: '2026-01-01T10:00:00.000Z', acknowledged_at: null, resolved_at: null, notes: 0, last_note: null, resolution_note: null, ...fields,
});

const digestOf = (refs: IncidentRef[]): Digest => ({
  scope: `path:${refs[0]?.entity_path}`, kind: 'path', type: 'incidents', namespace: 'default', entity_path: refs[0]?.entity_path ?? null,
  facts: { incidents: refs },
} as unknown as Digest);

const openIn = (digests: Digest[]): IncidentRef | undefined => {
  const state = new NamespaceState('default');
  for (const d of digests) state.setDigest(d);
  return state.openIncidents().get('PX1');
};

describe('NamespaceState.openIncidents with one id under two paths', () => {
  it('answers the one updated last, in either compile order', () => {
    const api = digestOf([ref('incidents/pagerduty/api', { status: 'acknowledged', acknowledged_at: '2026-01-01T10:05:00.000Z' })]);
    const web = digestOf([ref('incidents/pagerduty/web')]);
    expect(openIn([api, web])?.entity_path).toBe('incidents/pagerduty/api');
    expect(openIn([web, api])?.entity_path).toBe('incidents/pagerduty/api');
  });

  it('counts a later note as an update', () => {
    const api = digestOf([ref('incidents/pagerduty/api')]);
    const web = digestOf([ref('incidents/pagerduty/web', { last_note: { at: '2026-01-01T10:07:00.000Z', by: 'ann', content: 'rolling back' } })]);
    expect(openIn([api, web])?.entity_path).toBe('incidents/pagerduty/web');
    expect(openIn([web, api])?.entity_path).toBe('incidents/pagerduty/web');
  });

  it('breaks a tie by path, whichever compiled last', () => {
    const api = digestOf([ref('incidents/pagerduty/api')]);
    const web = digestOf([ref('incidents/pagerduty/web')]);
    expect(openIn([api, web])?.entity_path).toBe('incidents/pagerduty/api');
    expect(openIn([web, api])?.entity_path).toBe('incidents/pagerduty/api');
    // Recompiling one of them (set again, last) changes nothing.
    const state = new NamespaceState('default');
    for (const d of [api, web]) state.setDigest(d);
    state.setDigest({ ...api } as Digest);
    expect(state.openIncidents().get('PX1')?.entity_path).toBe('incidents/pagerduty/api');
  });

  it('leaves a resolved one out, so the other open one answers', () => {
    const api = digestOf([ref('incidents/pagerduty/api', { status: 'resolved', resolved_at: '2026-01-01T11:00:00.000Z' })]);
    const web = digestOf([ref('incidents/pagerduty/web')]);
    expect(openIn([api, web])?.entity_path).toBe('incidents/pagerduty/web');
    expect(openIn([web, api])?.entity_path).toBe('incidents/pagerduty/web');
  });
});
