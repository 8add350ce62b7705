import { describe, expect, it } from 'vitest';
import { eventDedupOf, isArchivedCollection } from '../../packages/server/src/services/archive/collections.ts';
import { deliveryDedupCollection, eventDedupCollection } from '../../packages/server/src/services/retention/dedup-collections.ts';

/** An export reads a namespace's event sources back from the names in the list of dedup collections. */
describe('eventDedupOf', () => {
  it('reads back the namespace and source of every event dedup collection', () => {
    for (const namespace of ['default', 'acme/b', 'a%2Fb', 'acme/events']) {
      for (const source of ['datadog', 'probe.v2', 'x_y-z']) {
        const collection = eventDedupCollection(namespace, source);
        expect(eventDedupOf(collection), collection).toEqual({ namespace, source });
        expect(isArchivedCollection(collection), collection).toBe(true);
      }
    }
  });

  it('reads nothing from a connector\'s dedup collection or a name no event makes', () => {
    expect(eventDedupOf(deliveryDedupCollection('acme/events', 'github'))).toBeNull();
    expect(eventDedupOf(deliveryDedupCollection('default', 'github'))).toBeNull();
    for (const name of ['dedup/acme/b/events/x', 'dedup/default/events/Bad', 'dedup/default/events/', 'dedup/default/events/a/b', 'dedup/%2E%2E/events/x', 'dedup/default/event/x', 'audit/default']) {
      expect(eventDedupOf(name), name).toBeNull();
    }
  });
});
