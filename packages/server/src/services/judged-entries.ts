import type { JudgedEntry } from 'cairn-memory-client';
import { z } from 'zod';
import { EntityPathSchema, KeySchema } from '../domain/names.ts';
import { sha256 } from '../domain/content-hash.ts';
import { type Entry, isLive } from '../domain/entry.ts';
import { shortText } from '../cortex/fields.ts';
import type { ServiceDeps } from './context.ts';

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
/** Records read per briefing: bounded, since each is checked against its entry. */
const MAX_READ = 200;

/** Keep the pointer in step with an entry whose evidence an outcome just changed. */
export const noteEvidence = async (deps: Pick<ServiceDeps, 'store'>, entry: Entry): Promise<void> => {
  const judged = entry.evidence.status === 'contested' || entry.evidence.status === 'discredited';
  if (judged) await deps.store.putRecord(evidenceCollection(entry.namespace), idOf(entry), { entity_path: entry.entity_path, key: entry.key });
  else await deps.store.deleteRecord(evidenceCollection(entry.namespace), idOf(entry));
};

/** The contested and discredited entries visible through `under`, as they are now. */
export const judgedEntries = async (
  deps: Pick<ServiceDeps, 'store' | 'now'>,
  namespace: string,
  under: (path: string) => boolean,
): Promise<JudgedEntry[]> => {
  const records = await deps.store.listRecords(evidenceCollection(namespace), { limit: MAX_READ });
  const now = deps.now();
  const judged: JudgedEntry[] = [];
  for (const record of records) {
    const { entity_path, key } = record.data as { entity_path: string; key: string };
    if (!under(entity_path)) continue;
    const head = await deps.store.head({ namespace, entity_path, key });
    // Versions written before evidence existed (filesystem, S3) carry none: untested.
    if (!head?.evidence || !isLive(head, now) || head.evidence.status === 'untested' || head.evidence.status === 'validated') continue;
    const { successes, failures, status } = head.evidence;
    judged.push({ entity_path, key, version: head.version, status, successes, failures, written_at: head.written_at, summary: shortText(head.value) });
  }
  return judged;
};
