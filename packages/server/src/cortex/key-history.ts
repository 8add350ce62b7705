import type { Entry } from '../domain/entry.ts';
import { type ForgetTarget, forgetNames } from '../domain/forget-target.ts';
import type { Store } from '../ports/store.ts';
import { type ConfidenceDrop, type ContestedKey, WEEK_MS } from './digest-types.ts';
import { objOf, str } from './fields.ts';

export interface KeyFindings {
  version: number;
  drop: ConfidenceDrop | null;
  contest: ContestedKey | null;
}

/** How far back one key's history is read: enough to see a back-and-forth. */
const DEPTH = 10;
const CONCURRENCY = 8;
/** Two reversals between agents with different values is a disagreement, not an update. */
const MIN_OVERWRITES = 2;

const id = (e: Entry): string => `${e.namespace}\u0000${e.entity_path}\u0000${e.key}`;

/** What a key's recent versions say: did trust fall, and are agents fighting over it? */
export const findingsOf = (versions: Entry[]): KeyFindings | null => {
  const [head, previous] = versions;
  if (!head) return null;
  let drop: ConfidenceDrop | null = null;
  if (previous && !previous.deleted && head.confidence < previous.confidence) {
    const outcome = objOf(head.provenance.last_outcome);
    drop = {
      entity_path: head.entity_path, key: head.key, version: head.version, from: previous.confidence, to: head.confidence, at: head.written_at, by: head.agent_id,
      reason: outcome?.outcome === 'failure' ? `a failure was reported${str(outcome.by) ? ` by ${str(outcome.by)}` : ''}` : `rewritten by ${head.agent_id} with lower confidence`,
    };
  }
  const oldestFirst = [...versions].reverse();
  const agents = new Set<string>();
  const overwritten: number[] = [];
  for (let i = 1; i < oldestFirst.length; i++) {
    const [before, after] = [oldestFirst[i - 1] as Entry, oldestFirst[i] as Entry];
    if (after.deleted || before.deleted || after.agent_id === before.agent_id || after.content_hash === before.content_hash) continue;
    overwritten.push(after.version);
    agents.add(before.agent_id).add(after.agent_id);
  }
  const contest = overwritten.length >= MIN_OVERWRITES && agents.size >= 2
    ? { entity_path: head.entity_path, key: head.key, agents: [...agents].sort(), overwrites: overwritten.length, versions: overwritten, last_at: head.written_at }
    : null;
  return { version: head.version, drop, contest };
};

/**
 * Findings per key, read from history only when a key has a version the cache has not seen:
 * after the first compile, a recompile reads the history of the keys that changed and no
 * others. Keys untouched for a week are not read at all (a drop or a fight that old is no
 * longer news), which bounds the catch-up after a restart.
 */
export class KeyHistory {
  private readonly store: Store;
  private readonly cache = new Map<string, KeyFindings>();
  private readonly max: number;

  constructor(store: Store, max = 200_000) {
    this.store = store;
    this.max = max;
  }

  async analyze(entries: Entry[], now: number): Promise<KeyFindings[]> {
    const wanted = entries.filter((e) => e.version > 1 && now - Date.parse(e.written_at) <= WEEK_MS);
    const out: KeyFindings[] = [];
    const stale = wanted.filter((e) => {
      const known = this.cache.get(id(e));
      if (known?.version === e.version) out.push(known);
      return known?.version !== e.version;
    });
    for (let i = 0; i < stale.length; i += CONCURRENCY) {
      const batch = stale.slice(i, i + CONCURRENCY);
      const read = await Promise.all(batch.map((e) => this.store.history(e, { limit: DEPTH })));
      batch.forEach((e, j) => {
        const findings = findingsOf(read[j] ?? []);
        if (!findings) return;
        this.remember(id(e), findings);
        out.push(findings);
      });
    }
    return out;
  }

  /** Drop what was learnt of the entries a forget names. */
  forget(target: ForgetTarget): void {
    for (const key of [...this.cache.keys()]) {
      const [namespace = '', entity_path = '', k = ''] = key.split('\u0000');
      if (forgetNames(target, { namespace, entity_path, key: k })) this.cache.delete(key);
    }
  }

  private remember(key: string, findings: KeyFindings): void {
    this.cache.delete(key);
    this.cache.set(key, findings);
    if (this.cache.size > this.max) this.cache.delete(this.cache.keys().next().value as string);
  }
}
