import type { Recollection, Remembered, Wants } from '../connectors/connector.ts';
import { sha256 } from '../domain/content-hash.ts';
import type { RecordStore } from '../ports/records.ts';

/** Held items per object read at once; an object with more waits for its next delivery. */
const HELD_PAGE = 200;
/** Ids one delivery may ask for: `wants` reads an unverified-shape body, so bound it. */
const MAX_WANTS = 16;
/** Longest held record id kept as it is: an archive line and an S3 object key must hold it. */
const MAX_HELD_ID_BYTES = 200;

/** Facts a connector learned (an incident's service, a Jira project id's key), by id. */
export const learnedCollection = (namespace: string, connector: string): string => `connector-memory/${namespace}/${connector}`;

/**
 * Items a connector holds until their object is known (a PagerDuty note that came before its
 * incident), all of one connector in one collection, so that an export can name it and carry
 * them: the provider was answered 202 and never sends them again. Each record's id is its
 * object's, then "/", then the item's; an object's items are next to each other in id order.
 */
export const heldCollection = (namespace: string, connector: string): string => `connector-held/${namespace}/${connector}`;
/** Where releases before held items shared a collection kept them: one collection per object, which no export can find. */
const legacyHeldCollection = (namespace: string, connector: string, object: string): string => `connector-held/${namespace}/${connector}/${object}`;

/** The ids of an object's held items start with this; the object is encoded, so it holds no "/". */
const heldPrefix = (object: string): string => `${encodeURIComponent(object)}/`;
const heldId = (object: string, itemId: string): string => {
  const id = heldPrefix(object) + itemId;
  return Buffer.byteLength(id, 'utf8') <= MAX_HELD_ID_BYTES ? id : `${heldPrefix(object)}sha256:${sha256(itemId)}`;
};

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
    const items = [...(await heldItems(store, namespace, connector, object)), ...(await legacyHeldItems(store, namespace, connector, object))];
    if (items.length > 0) held.set(object, items);
  }
  return { facts, held };
};

/** An object's held items, oldest id first; each one's id is the record's without the object. */
const heldItems = async (store: RecordStore, namespace: string, connector: string, object: string): Promise<Remembered[]> => {
  const prefix = heldPrefix(object);
  const page = await store.listRecords(heldCollection(namespace, connector), { after: prefix, limit: HELD_PAGE });
  return page.filter((r) => r.id.startsWith(prefix)).map((r) => ({ id: r.id.slice(prefix.length), data: r.data }));
};

/** Items held before this layout, still joined when their object turns up. */
const legacyHeldItems = async (store: RecordStore, namespace: string, connector: string, object: string): Promise<Remembered[]> =>
  (await store.listRecords(legacyHeldCollection(namespace, connector, object), { limit: HELD_PAGE })).map((r) => ({ id: r.id, data: r.data }));

/** Put what a delivery taught the connector (it decided, from what it recalled, that these are new). */
export const learn = async (store: RecordStore, namespace: string, connector: string, facts: readonly Remembered[]): Promise<void> => {
  for (const fact of facts) await store.putRecord(learnedCollection(namespace, connector), fact.id, fact.data);
};

/** Keep an item for an object not known yet; holding the same item twice keeps it once. */
export const hold = (store: RecordStore, namespace: string, connector: string, object: string, item: Remembered): Promise<boolean> =>
  store.createRecord(heldCollection(namespace, connector), heldId(object, item.id), item.data);

/**
 * Drop held items a stored write has joined. Only the ones it read: an item held meanwhile
 * stays for the object's next delivery.
 */
export const release = async (store: RecordStore, namespace: string, connector: string, object: string, ids: readonly string[]): Promise<void> => {
  for (const id of ids) {
    await store.deleteRecord(heldCollection(namespace, connector), heldId(object, id));
    await store.deleteRecord(legacyHeldCollection(namespace, connector, object), id);
  }
};

/** Every learned fact of a connector (Jira's project map is small: one per project and board). */
export const learnedFacts = async (store: RecordStore, namespace: string, connector: string, limit = 1000): Promise<Remembered[]> =>
  (await store.listRecords(learnedCollection(namespace, connector), { limit })).map((r) => ({ id: r.id, data: r.data }));
