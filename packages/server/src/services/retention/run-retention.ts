import type { CompactionResult, Store } from '../../ports/store.ts';
import { expireAudit } from './expire-audit.ts';
import { expireDedup } from './expire-dedup.ts';
import { loadPolicies, oldestKept, policyFor } from './retention-policies.ts';
import { yieldTurns } from '../../event-loop.ts';

export interface RetentionResult {
  /** Entries a policy covers that have more than one version. */
  entries_checked: number;
  versions_dropped: number;
  dedup_expired: number;
  /** Audit batches older than the audit retention (none when it is 0, keep all). */
  audit_expired: number;
  /** The compaction that reclaimed the dropped versions' space, when any were dropped. */
  compaction: CompactionResult | null;
  ms: number;
}

/** A pass's counts of one namespace (`runRetention`'s `tally`). */
export interface NamespaceRetention {
  versions_dropped: number;
  dedup_expired: number;
  audit_expired: number;
}

/**
 * What a pass removed, namespace by namespace (only those it removed something of): an audit
 * event stored in one namespace may tell that namespace's counts, never another's.
 */
export type RetentionTally = Map<string, NamespaceRetention>;

/** Entries between yields to the event loop, so a long pass never holds requests up. */
const YIELD_EVERY = 200;
/** Drops in flight at once: the filesystem log commits them in groups, one sync each. */
const DROPS_IN_FLIGHT = 64;

/** How long records kept beside the entries live (Config's dedupWindowMs and auditRetentionMs). */
export interface RecordWindows {
  dedupWindowMs: number;
  /** 0: the audit log is kept whole. */
  auditRetentionMs: number;
}

/**
 * One retention pass over every entry of every namespace with a policy: drop the versions the
 * policy no longer keeps, compact if any went, then expire old dedup records and audit
 * batches. Idempotent, and safe to cut short: each drop stands on its own, and the next pass
 * finishes the job. Expired records leave the filesystem's disk at its next compaction.
 * `tally`, if given, is filled with the counts of each namespace.
 */
export const runRetention = async (store: Store, now: number, windows: RecordWindows, tally?: RetentionTally): Promise<RetentionResult> => {
  const count = (field: keyof NamespaceRetention) => (namespace: string | null, n: number) => {
    if (!tally || namespace === null || n === 0) return;
    const counts = tally.get(namespace) ?? { versions_dropped: 0, dedup_expired: 0, audit_expired: 0 };
    counts[field] += n;
    tally.set(namespace, counts);
  };
  const started = performance.now();
  const policies = await loadPolicies(store);
  let checked = 0;
  let dropped = 0;
  let inFlight: Promise<number>[] = [];
  const settle = async () => {
    for (const n of await Promise.all(inFlight)) dropped += n;
    inFlight = [];
  };
  if (policies.length > 0) {
    let seen = 0;
    for await (const head of store.scanHeads()) {
      if (++seen % YIELD_EVERY === 0) await yieldTurns();
      const policy = policyFor(policies, head.namespace, head.entity_path);
      if (!policy || head.version < 2) continue;
      checked += 1;
      const writtenAt = async (v: number) => {
        const entry = await store.version(head, v);
        return entry ? Date.parse(entry.written_at) : null;
      };
      const keepFrom = await oldestKept(policy, head.version, writtenAt, now);
      if (keepFrom > 1) {
        inFlight.push(
          store.dropVersionsBefore(head, keepFrom).then((n) => {
            count('versions_dropped')(head.namespace, n);
            return n;
          }),
        );
      }
      if (inFlight.length >= DROPS_IN_FLIGHT) await settle();
    }
    await settle();
  }
  const compaction = dropped > 0 ? await store.compact() : null;
  const dedup_expired = await expireDedup(store, now, windows.dedupWindowMs, count('dedup_expired'));
  const audit_expired = await expireAudit(store, now, windows.auditRetentionMs, count('audit_expired'));
  return { entries_checked: checked, versions_dropped: dropped, dedup_expired, audit_expired, compaction, ms: Math.round(performance.now() - started) };
};
