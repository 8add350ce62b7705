import type { MappedWrite } from '../connectors/connector.ts';
import { contentHash } from '../domain/content-hash.ts';
import type { Entry, EntryLink, EntryValue } from '../domain/entry.ts';
import type { Context, ServiceDeps } from './context.ts';
import { MAX_LINKS } from './schemas.ts';
import { writeDerived } from './write-entry.ts';

export interface DeliveredEntry {
  entity_path: string;
  key: string;
  version: number;
  created: boolean;
}

/**
 * Store the writes one inbound event maps to, as shared entries written by
 * `external/<source>`. A write with `update` is a read-modify-write: its value is re-derived
 * from the newest version on every compare-and-set attempt (writeDerived), so a delivery that
 * races another write builds on it instead of overwriting it. The retries are appendVersion's
 * alone; nothing here loops around them.
 */
export const deliverWrites = async (
  deps: ServiceDeps,
  ctx: Context,
  source: string,
  provenance: Record<string, unknown>,
  writes: readonly MappedWrite[],
): Promise<Array<{ entry: Entry; created: boolean }>> => {
  const results: Array<{ entry: Entry; created: boolean }> = [];
  for (const write of writes) results.push(await deliverOne(deps, ctx, source, provenance, write));
  return results;
};

const deliverOne = async (
  deps: ServiceDeps,
  ctx: Context,
  source: string,
  provenance: Record<string, unknown>,
  write: MappedWrite,
): Promise<{ entry: Entry; created: boolean }> => {
  const fields = {
    confidence: write.confidence,
    agent_id: `external/${source}`,
    event_type: write.event_type,
    memory_type: write.memory_type ?? 'event',
    shared: true,
    tags: write.tags ?? [],
    links: write.links ?? [],
    provenance: { source, ...provenance },
  };
  const target = { entity_path: write.entity_path, key: write.key };
  const { update } = write;
  // Both kinds read the current version, so links others set on it are carried over.
  // A write without `update` has a `value` (validated like any request body on each attempt).
  if (!update) {
    const value = write.value as EntryValue;
    const repeats = write.repeats ?? sameAsCurrent(contentHash(value), write.event_type);
    return writeDerived(deps, ctx, target, (current) => {
      const links = linksAfter(current, write);
      return current && repeats(current) && sameLinks(current.links, links) ? null : { ...fields, value, links };
    });
  }
  return writeDerived(deps, ctx, target, (current) => {
    const value = update(current?.value ?? null);
    // A replayed or late event that changes nothing makes no version (its metadata — the
    // delivery id, the event type — would otherwise make one).
    if (current && contentHash(value) === current.content_hash) return null;
    return { ...fields, value, links: linksAfter(current, write) };
  });
};

const sameLink = (a: EntryLink, b: EntryLink): boolean => a.relation === b.relation && a.entity_path === b.entity_path && a.key === b.key;
const sameLinks = (a: readonly EntryLink[], b: readonly EntryLink[]): boolean => a.length === b.length && a.every((l, i) => sameLink(l, b[i] as EntryLink));

/**
 * A connector's write repeats the current version when it says the same (content and event
 * type): the same push or release sent again under a new delivery id (a second webhook on the
 * repository, a provider's resend) makes no version, whose only change would be its
 * provenance. The connector's own rule, when it has one, decides instead.
 */
const sameAsCurrent =
  (valueHash: string, eventType: string) =>
  (current: Entry): boolean =>
    current.content_hash === valueHash && current.event_type === eventType;

/**
 * The links of the write's new version: the connector's own (the relations it decides, see
 * MappedWrite.linkRelations), then the current version's links of every other relation, in
 * their order, so rewriting the same state keeps the same list and makes no version.
 */
export const linksAfter = (current: Entry | null, write: Pick<MappedWrite, 'links' | 'linkRelations'>): EntryLink[] => {
  const own = write.links ?? [];
  const decided = new Set(write.linkRelations ?? own.map((l) => l.relation));
  const carried = (current?.links ?? []).filter((l) => !decided.has(l.relation) && !own.some((o) => sameLink(o, l)));
  return [...own, ...carried].slice(0, MAX_LINKS);
};
