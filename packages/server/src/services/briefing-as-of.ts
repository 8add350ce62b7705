import type { JudgedEntry } from 'cairn-memory-client';
import { pathDigest } from '../cortex/assemble.ts';
import type { Digest } from '../cortex/digest-types.ts';
import { shortText } from '../cortex/fields.ts';
import type { Entry } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import type { ListPosition } from '../ports/store.ts';
import { AS_OF_MAX_ENTRIES } from './as-of-index.ts';
import type { ServiceDeps } from './context.ts';

const PAGE = 1000;

/** What a briefing as of a past instant is built from: the versions live then, and digests of them. */
export interface PastScope {
  entries: Entry[];
  /** Path digests compiled now from those versions, as the Cortex compiles them, dated at the instant. */
  digests: Digest[];
  judged: JudgedEntry[];
}

/**
 * The scope of a briefing as it stood at `asOf`. The Cortex keeps only its newest digests,
 * so digests of then are compiled on demand from the versions current then, with the same
 * per-type compilers: headlines, facts, open items and recent changes as a compile at that
 * instant would have made them. Two things need more than those versions and are left out:
 * confidence drops (they compare versions over time) and chat threads linked to incidents
 * open elsewhere in the namespace. Cost: linear in the entries under the scope.
 */
export const pastScope = async (deps: Pick<ServiceDeps, 'store'>, namespace: string, prefix: string | undefined, under: (path: string) => boolean, asOf: number): Promise<PastScope> => {
  const entries: Entry[] = [];
  let after: ListPosition | undefined;
  do {
    const page = await deps.store.list({ namespace, limit: PAGE, now: asOf, asOf, ...(prefix === undefined ? {} : { prefix }), ...(after ? { after } : {}) });
    entries.push(...page.entries.filter((e) => under(e.entity_path)));
    if (entries.length > AS_OF_MAX_ENTRIES) {
      throw new ServiceError('VALIDATION_FAILED', `a briefing as of a past instant reads at most ${AS_OF_MAX_ENTRIES} entries; narrow it with entity_path`, {
        details: [{ field: 'entity_path', message: `more than ${AS_OF_MAX_ENTRIES} entries were live then in this scope` }],
      });
    }
    after = page.next ?? undefined;
  } while (after);
  const compiledAt = new Date(asOf).toISOString();
  const digests: Digest[] = [];
  // Lists come in entity_path order, so each path's entries are consecutive.
  for (let i = 0; i < entries.length; ) {
    const path = (entries[i] as Entry).entity_path;
    let j = i;
    while (j < entries.length && (entries[j] as Entry).entity_path === path) j++;
    const draft = pathDigest(namespace, path, entries.slice(i, j), [], { now: asOf, openIncidents: new Map(), tokens: new Set() });
    digests.push({ ...draft, version: 0, compiled_at: compiledAt, content_hash: '' });
    i = j;
  }
  const judged = entries.flatMap((e): JudgedEntry[] => {
    const status = e.evidence?.status;
    if (status !== 'contested' && status !== 'discredited') return [];
    return [{ entity_path: e.entity_path, key: e.key, version: e.version, status, successes: e.evidence.successes, failures: e.evidence.failures, written_at: e.written_at, summary: shortText(e.value) }];
  });
  return { entries, digests, judged };
};
