import type { Entry, EntryLink } from '../domain/entry.ts';
import type { Digest } from './digest-types.ts';
import type { CommsFacts } from './digests/comms.ts';
import { COMMS } from './digests/comms.ts';
import type { Trace } from './traces.ts';

/** The relations the Cortex writes, stated once so the README can quote them. */
export const KNOWN_RELATIONS = {
  /** An incident → the failed deploy of the same system it followed (a failed_deploy_then_incident trace). */
  incidentCause: 'caused_by',
  /** A Slack thread → the open incident its parent message or replies name by id. */
  threadIncident: 'discusses',
} as const;

/** One link the Cortex knows: `from` should name `link`. */
export interface KnownLink {
  from: { entity_path: string; key: string };
  link: EntryLink;
}

/** The link a deploy → incident trace stands for: the incident is `caused_by` the deploy. */
export const linkOfTrace = (trace: Omit<Trace, 'detected_at'>): KnownLink | null => {
  if (trace.kind !== 'failed_deploy_then_incident') return null;
  const cause = trace.chain.find((s) => s.role === 'cause');
  const effect = trace.chain.find((s) => s.role === 'effect');
  if (!cause || !effect) return null;
  return { from: { entity_path: effect.entity_path, key: effect.key }, link: { relation: KNOWN_RELATIONS.incidentCause, entity_path: cause.entity_path, key: cause.key } };
};

/** The links a chat digest's incident threads stand for: each thread `discusses` its incident. */
export const linksOfComms = (digest: Digest): KnownLink[] => {
  if (digest.kind !== 'path' || digest.type !== COMMS.type) return [];
  return ((digest.facts.incident_threads ?? []) as CommsFacts['incident_threads']).map((t) => ({
    from: { entity_path: t.entity_path, key: t.key },
    link: { relation: KNOWN_RELATIONS.threadIncident, entity_path: t.incident.entity_path, key: t.incident.key },
  }));
};

/**
 * Writes one known link onto its entry: services/write-known-link.ts, passed in by the roots
 * (runtime.ts, cli/cortex-command.ts) because the write protocol is a service's, a layer
 * above the Cortex. Resolves whether a version was made.
 */
export type LinkWriter = (namespace: string, known: KnownLink) => Promise<boolean>;

/** How long a link write waits for the change feed's notice of its version before it is let go. */
const OWN_LINK_TTL_MS = 60_000;

const ownId = (namespace: string, from: { entity_path: string; key: string }, link: EntryLink): string =>
  [namespace, from.entity_path, from.key, link.relation, link.entity_path, link.key].join('\u0000');

/**
 * The link versions the worker writes itself, so that the change feed's notice of one does not
 * queue a recompile of the path: its only change is the link the Cortex derived from the
 * digests it holds (same value, writer, confidence), and a recompile would derive it again (a
 * catch-up writing a thousand links queued a thousand paths). The digest of the linked path
 * keeps quoting the version before the link (same content) until the path's next compile: its
 * next write, or the refresh of timed digests every 10 minutes (incident and chat digests, the
 * only ones the Cortex links from, are timed).
 *
 * A write is noted before it starts (the notice can come before the write resolves) and let go
 * when it made no version; its notice is matched once: the namespace, path and key, the link
 * last among the version's links (writeKnownLink appends it) and `linked_by: "cortex"`. A
 * notice that never comes is let go after OWN_LINK_TTL_MS. A version this misses is compiled
 * as any write is.
 */
export class OwnLinks {
  private readonly pending = new Map<string, { writes: number; at: number }>();
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  /** `write`, noting each link it writes as the worker's own. */
  wrap(write: LinkWriter): LinkWriter {
    return async (namespace, known) => {
      const id = ownId(namespace, known.from, known.link);
      const noted = this.pending.get(id);
      // Deleted and set again: the map stays in the order of `at`, so prune stops at the first kept.
      this.pending.delete(id);
      this.pending.set(id, { writes: (noted?.writes ?? 0) + 1, at: this.now() });
      let created = false;
      try {
        created = await write(namespace, known);
        return created;
      } finally {
        if (!created) this.release(id);
      }
    };
  }

  /** Whether `entry` is the version of a link this worker wrote (each matches once). */
  isOwn(entry: Entry): boolean {
    this.prune();
    const link = entry.links?.at(-1);
    if (!link || entry.provenance?.linked_by !== 'cortex') return false;
    const id = ownId(entry.namespace, entry, link);
    if (!this.pending.has(id)) return false;
    this.release(id);
    return true;
  }

  /** Links written or being written whose notice has not come (for tests). */
  get size(): number {
    return this.pending.size;
  }

  private release(id: string): void {
    const noted = this.pending.get(id);
    if (!noted) return;
    if (noted.writes > 1) this.pending.set(id, { ...noted, writes: noted.writes - 1 });
    else this.pending.delete(id);
  }

  private prune(): void {
    const before = this.now() - OWN_LINK_TTL_MS;
    for (const [id, noted] of this.pending) {
      if (noted.at >= before) return;
      this.pending.delete(id);
    }
  }
}
