import { z } from 'zod';
import { EntityPathSchema, KeySchema, namespaceSegment } from '../../domain/names.ts';
import type { RecordStore } from '../../ports/records.ts';
import { noteCollection } from './noted-collections.ts';

/**
 * The dedup collections that exist (`dedup/<namespace>/<connector>`, `dedup/<namespace>/events/<source>`),
 * one record each, so expiry can find them: records are read by collection, and there is no
 * listing of collections on every backend.
 */
export const DEDUP_COLLECTIONS = 'dedup-collections';

/**
 * A connector's deliveries seen in a namespace, and a `POST /api/v1/events` source's events
 * seen. The namespace is one segment (namespaceSegment): written as it is, namespace
 * `acme/events`'s GitHub deliveries and namespace `acme`'s events from source `github` shared
 * `dedup/acme/events/github`.
 */
export const deliveryDedupCollection = (namespace: string, connector: string): string => `dedup/${namespaceSegment(namespace)}/${connector}`;
export const eventDedupCollection = (namespace: string, source: string): string => `dedup/${namespaceSegment(namespace)}/events/${source}`;

/**
 * A connector delivery seen (receive-delivery.ts): a redelivery answers with its entries (none
 * when the record has no list). An event seen (ingest-event.ts) is only looked up, never read.
 */
export const DeliveryDedupSchema = z.looseObject({
  entries: z.array(z.looseObject({ entity_path: EntityPathSchema, key: KeySchema, version: z.number().int().min(1), created: z.boolean() })).optional(),
});

/** The shape a dedup collection's records are read as: `dedup/<namespace>/<connector>` only. */
export const dedupSchemaOf = (collection: string): z.ZodType | null => (/^dedup\/[^/]+\/[^/]+$/.test(collection) ? DeliveryDedupSchema : null);

export const noteDedupCollection = (records: RecordStore, collection: string): Promise<void> => noteCollection(records, DEDUP_COLLECTIONS, collection);
