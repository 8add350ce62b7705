import type { Recollection, Remembered, Wants } from '../connectors/connector.ts';
import type { RecordStore } from '../ports/records.ts';

/** Held items per object read at once; an object with more waits for its next delivery. */
const HELD_PAGE = 200;
/** Ids one delivery may ask for: `wants` reads an unverified-shape body, so bound it. */
const MAX_WANTS = 16;

/** Facts a connector learned (an incident's service, a Jira project id's key), by id. */
export const learnedCollection = (namespace: string, connector: string): string => `connector-memory/${namespace}/${connector}`;
const heldCollection = (namespace: string, connector: string, object: string): string => `connector-held/${namespace}/${connector}/${object}`;

/**
 * Read what a delivery wants recalled, from the shared records beside the dedup records, so
 * every replica, before or after a restart, knows what any of them learned.
 */
export const recall = async (store: RecordStore, namespace: string, connector: string, wants: Wants | undefined): Promise<Recollection> => {
  const facts = new Map<string, Record<string, unknown>>();
  const held = new Map<string, Remembered[]>();
  for (const id of new Set(wants?.facts.slice(0, MAX_WANTS))) {
    const record = await store.getRecord(learnedCollection(namespace, connector), id);
    if (record) facts.set(id, record.data);
  }
  for (const object of new Set(wants?.held.slice(0, MAX_WANTS))) {
    const records = await store.listRecords(heldCollection(namespace, connector, object), { limit: HELD_PAGE });
    if (records.length > 0) held.set(object, records.map((r) => ({ id: r.id, data: r.data })));
  }
  return { facts, held };
};

/** Put what a delivery taught the connector (it decided, from what it recalled, that these are new). */
export const learn = async (store: RecordStore, namespace: string, connector: string, facts: readonly Remembered[]): Promise<void> => {
  for (const fact of facts) await store.putRecord(learnedCollection(namespace, connector), fact.id, fact.data);
};

/** Keep an item for an object not known yet; holding the same item twice keeps it once. */
export const hold = (store: RecordStore, namespace: string, connector: string, object: string, item: Remembered): Promise<boolean> =>
  store.createRecord(heldCollection(namespace, connector, object), item.id, item.data);

/**
 * Drop held items a stored write has joined. Only the ones it read: an item held meanwhile
 * stays for the object's next delivery.
 */
export const release = async (store: RecordStore, namespace: string, connector: string, object: string, ids: readonly string[]): Promise<void> => {
  for (const id of ids) await store.deleteRecord(heldCollection(namespace, connector, object), id);
};

/** Every learned fact of a connector (Jira's project map is small: one per project and board). */
export const learnedFacts = async (store: RecordStore, namespace: string, connector: string, limit = 1000): Promise<Remembered[]> =>
  (await store.listRecords(learnedCollection(namespace, connector), { limit })).map((r) => ({ id: r.id, data: r.data }));
