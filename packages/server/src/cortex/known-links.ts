import type { EntryLink } from '../domain/entry.ts';
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
