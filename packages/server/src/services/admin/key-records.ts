import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ManagedKey } from 'cairn-memory-client';
import { z } from 'zod';
import { type Access, SCOPES } from '../../domain/access.ts';
import { EntityPathSchema, NamespaceSchema } from '../../domain/names.ts';
import type { Store } from '../../ports/store.ts';

/** Managed keys live in one global collection: a key must be found before its namespace is known. */
export const KEYS = 'api-keys';

/** What is stored per key: the listed fields (the id is the record's) and the key's SHA-256, never the key. */
export type KeyRecord = Omit<ManagedKey, 'id'> & { hash: string };

/** A key record's shape, for data that did not come through create-key.ts (an import). */
export const KeyRecordSchema = z.object({
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)).min(1),
  prefixes: z.array(EntityPathSchema).nullable(),
  namespace: NamespaceSchema,
  team: z.string().nullable(),
  hash: z.string().regex(/^[0-9a-f]{64}$/, { error: 'expected a SHA-256 in hex' }),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
});

/**
 * Keys look like `ck_<id>_<secret>`: the id finds the record in one lookup, the 256-bit
 * secret is what proves possession. Keys have enough entropy that a plain SHA-256 is the
 * right hash (a slow password hash would only slow every request).
 */
export const newKey = (): { id: string; key: string; hash: string } => {
  const id = randomBytes(6).toString('hex');
  const key = `ck_${id}_${randomBytes(32).toString('base64url')}`;
  return { id, key, hash: hashKey(key) };
};

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** The id inside a managed key, or null when the string is not shaped like one. */
export const keyIdOf = (key: string): string | null => /^ck_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/.exec(key)?.[1] ?? null;

export const keyMatches = (record: KeyRecord, key: string): boolean => {
  // A record whose hash is not a SHA-256 (damaged, or written by hand) matches no key: compared
  // as it is, buffers of unequal length would throw, a 500 for every request with that key.
  const stored = typeof record.hash === 'string' ? Buffer.from(record.hash, 'hex') : Buffer.alloc(0);
  return stored.length === 32 && timingSafeEqual(stored, Buffer.from(hashKey(key), 'hex'));
};

export const accessOfKey = (id: string, record: KeyRecord): Access => ({
  keyId: id,
  scopes: record.scopes,
  prefixes: record.prefixes,
  namespaces: [record.namespace],
  team: record.team,
});

/**
 * Whether the caller's prefixes cover everything `record` reaches: a key confined to some
 * paths manages only keys confined within them (the keys it could have issued), never one of
 * the whole namespace, which would reach what it may not.
 */
export const withinReach = (record: KeyRecord, visible: (path: string) => boolean, confined: boolean): boolean =>
  !confined || (record.prefixes !== null && record.prefixes.every(visible));

/** The public view of a key: everything but its hash (the client's `ManagedKey`). */
export const keyView = (id: string, record: KeyRecord): ManagedKey => {
  const { hash: _hash, ...rest } = record;
  return { id, ...rest };
};

const KEY_PAGE = 500;

/** Every managed key record, in id order, a page of the collection at a time. */
export async function* allKeyRecords(store: Pick<Store, 'listRecords'>): AsyncGenerator<{ id: string; record: KeyRecord }> {
  for (let after: string | undefined; ; ) {
    const page = await store.listRecords(KEYS, { limit: KEY_PAGE, ...(after ? { after } : {}) });
    for (const { id, data } of page) yield { id, record: data as unknown as KeyRecord };
    if (page.length < KEY_PAGE) return;
    after = page[page.length - 1]?.id;
  }
}
