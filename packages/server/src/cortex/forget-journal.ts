import { randomBytes } from 'node:crypto';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { RecordStore } from '../ports/records.ts';
import { allRecords, COLLECTIONS } from './cortex-records.ts';
import { logIdAt, logTimeOf } from './event-log.ts';

/**
 * The forgets the API made, as shared records (`cortex/forgets`: paths and keys only, never
 * content), so that the active Cortex worker learns of every one even when it missed the
 * change feed's notice (a PostgreSQL LISTEN connection that was down, a worker that was not
 * leading yet), and so that the API can wait, before it answers, for the worker to have
 * applied it: dropped what it held of the namespace and the records quoting the forgotten
 * entries. After that the worker writes nothing read before the forget.
 */
export interface ForgetNotice {
  namespace: string;
  prefix: string;
  key?: string;
  /** Set by the worker that applied it. */
  applied_by?: string;
  applied_at?: string;
}

/** Notices are kept this long, applied or not: a leader applies the ones it finds at once. */
export const NOTICE_KEEP_MS = 60 * 60_000;

export const targetOf = (n: ForgetNotice): ForgetTarget => ({ namespace: n.namespace, prefix: n.prefix, ...(n.key === undefined ? {} : { key: n.key }) });

/** Record a forget (after the store's forget committed); answers the notice id. */
export const noteForget = async (records: RecordStore, target: ForgetTarget, now: number): Promise<string> => {
  const id = `${logIdAt(now)}-${randomBytes(6).toString('hex')}`;
  const notice: ForgetNotice = targetOf({ ...target });
  await records.createRecord(COLLECTIONS.forgets, id, { ...notice });
  return id;
};

export const markApplied = async (records: RecordStore, id: string, notice: ForgetNotice, by: string, now: number): Promise<void> => {
  await records.putRecord(COLLECTIONS.forgets, id, { ...notice, applied_by: by, applied_at: new Date(now).toISOString() });
};

/** Whether the notice was applied (or is gone: trimmed or never stored) by `deadline`. */
export const awaitApplied = async (records: RecordStore, id: string, deadline: number, pollMs = 100): Promise<boolean> => {
  for (;;) {
    const record = await records.getRecord(COLLECTIONS.forgets, id);
    if (record === null || typeof record.data.applied_at === 'string') return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
};

/** Notices not applied yet; deletes those older than NOTICE_KEEP_MS (so do the forgets: no worker may run). */
export const unapplied = async (records: RecordStore, now: number): Promise<Array<{ id: string; notice: ForgetNotice }>> => {
  const out: Array<{ id: string; notice: ForgetNotice }> = [];
  const old: string[] = [];
  for await (const r of allRecords(records, COLLECTIONS.forgets)) {
    if (now - logTimeOf(r.id) > NOTICE_KEEP_MS) old.push(r.id);
    else if (typeof r.data.applied_at !== 'string') out.push({ id: r.id, notice: r.data as unknown as ForgetNotice });
  }
  for (const id of old) await records.deleteRecord(COLLECTIONS.forgets, id);
  return out;
};
