import type { JudgedEntry } from 'cairn-memory-client';
import { z } from 'zod';
import { EntityPathSchema, KeySchema, pathHasPrefix } from '../domain/names.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { RecordStore } from '../ports/records.ts';
import { sha256 } from '../domain/content-hash.ts';
import { type Entry, isLive } from '../domain/entry.ts';
import { shortText } from '../cortex/fields.ts';
import type { ServiceDeps } from './context.ts';
import { allRecords } from '../cortex/cortex-records.ts';

/**
 * Entries that outcomes have called into question (contested or discredited), per namespace:
 * a small shared record per entry, so a briefing can name them without scanning every entry.
 * The versions stay the truth: a record is a pointer, checked against the entry's current
 * version when read, so a record left behind (a failed update, content rewritten since) is
 * never shown as a judgement it no longer is.
 */
export const evidenceCollection = (namespace: string): string => `evidence/${namespace}`;
/** A stored pointer as noteEvidence writes it (import checks archives against it). */
export const EvidencePointerSchema = z.object({ entity_path: EntityPathSchema, key: KeySchema }).strict();
const idOf = (e: { entity_path: string; key: string }): string => sha256(JSON.stringify([e.entity_path, e.key]));
/** Entries read at once to check records against: a briefing's reads stay bounded in flight. */
const READ_AHEAD = 16;

/**
 * How outcomes have called this version into question, if they have: what a pointer is kept for.
 * Versions written before evidence existed (filesystem, S3) carry none: untested.
 */
const judgedStatus = (entry: Entry): JudgedEntry['status'] | null => {
  const status = entry.evidence?.status;
  return status === 'contested' || status === 'discredited' ? status : null;
};

/**
 * Keep the pointer in step with an entry whose evidence an outcome just changed from that of
 * `before`. A judged version's pointer is written each time (a write that failed before is made
 * good); one that was not judged before and is not now has none to remove: a pointer left
 * behind is checked against the entry when read (judgedEntries), so the delete it cost each
 * such outcome (a request on S3) bought nothing.
 */
export const noteEvidence = async (deps: Pick<ServiceDeps, 'store'>, entry: Entry, before: Entry): Promise<void> => {
  if (judgedStatus(entry)) await deps.store.putRecord(evidenceCollection(entry.namespace), idOf(entry), { entity_path: entry.entity_path, key: entry.key });
  else if (judgedStatus(before)) await deps.store.deleteRecord(evidenceCollection(entry.namespace), idOf(entry));
};

/**
 * Remove the pointers of the entries a forget names (`target`: one key at a path, or every
 * entry at or under a path): a pointer holds the entry's path and key, which a forget must not
 * leave behind, nor an export carry. One entry's by id; a path's found among the namespace's
 * records, a page at a time (ids are hashes, in no order of paths). Resolves to how many went.
 */
export const forgetEvidence = async (store: RecordStore, target: ForgetTarget): Promise<number> => {
  const collection = evidenceCollection(target.namespace);
  if (target.key !== undefined) return (await store.deleteRecord(collection, idOf({ entity_path: target.prefix, key: target.key }))) ? 1 : 0;
  let removed = 0;
  let after: string | undefined;
  for (;;) {
    const page = await store.listRecords(collection, { limit: 500, ...(after === undefined ? {} : { after }) });
    for (const record of page) {
      const path = record.data.entity_path;
      if (typeof path === 'string' && pathHasPrefix(path, target.prefix) && (await store.deleteRecord(collection, record.id))) removed += 1;
    }
    if (page.length < 500) return removed;
    after = page[page.length - 1]?.id;
  }
};

/**
 * The contested and discredited entries visible through `under`, as they are now: every one.
 * A record names its entry by a hash, so records are listed in no order of paths, and a
 * scope's are found among the namespace's only by reading them all (a page at a time); only
 * those under the scope are checked against their entry, READ_AHEAD at a time. Reading the
 * first 200 records alone left a scope's judged entries out once the namespace held more:
 * discredited ones came back in recent changes, and were missing from tried_and_failed.
 */
export const judgedEntries = async (
  deps: Pick<ServiceDeps, 'store' | 'now'>,
  namespace: string,
  under: (path: string) => boolean,
): Promise<JudgedEntry[]> => {
  const now = deps.now();
  const judged: JudgedEntry[] = [];
  const check = async ({ entity_path, key }: { entity_path: string; key: string }): Promise<JudgedEntry | null> => {
    const head = await deps.store.head({ namespace, entity_path, key });
    if (!head || !isLive(head, now)) return null;
    const status = judgedStatus(head);
    if (!status) return null;
    const { successes, failures } = head.evidence;
    return { entity_path, key, version: head.version, status, successes, failures, written_at: head.written_at, summary: shortText(head.value) };
  };
  // In the records' order (by id), whichever read finishes first.
  const flush = async (batch: { entity_path: string; key: string }[]) => {
    for (const j of await Promise.all(batch.map(check))) if (j) judged.push(j);
  };
  let batch: { entity_path: string; key: string }[] = [];
  for await (const record of allRecords(deps.store, evidenceCollection(namespace))) {
    const pointer = record.data as { entity_path: string; key: string };
    if (!under(pointer.entity_path)) continue;
    batch.push(pointer);
    if (batch.length === READ_AHEAD) {
      await flush(batch);
      batch = [];
    }
  }
  await flush(batch);
  return judged;
};
