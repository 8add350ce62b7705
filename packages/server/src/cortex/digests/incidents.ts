import type { Entry } from '../../domain/entry.ts';
import { type DigestTypeDef, DIGEST_LIMITS, type OpenItem, type TypedFacts, WEEK_MS } from '../digest-types.ts';
import { clipped, clippedStrings, humanDuration, mean, ms, objOf, sortedByTimeDesc, str, TEXT_CHARS, topCounts } from '../fields.ts';
import { type IncidentRef, unresolved } from './incident-ref.ts';
import { clipText } from '../../domain/clip-text.ts';
import { compareCodePoints } from '../../domain/order.ts';

export interface IncidentFacts {
  counts: { open: number; acknowledged: number; resolved: number; total: number };
  /** Mean time to acknowledge / resolve from the trigger, over the incidents that got there. */
  mtta_ms: number | null;
  mttr_ms: number | null;
  acks: { count: number; total_ms: number };
  resolutions: { count: number; total_ms: number };
  services: Array<{ service: string; incidents: number; unresolved: number; last_7d: number; last_triggered_at: string | null }>;
  responders: Array<{ name: string; incidents: number }>;
  incidents?: IncidentRef[];
}

const refOf = (entry: Entry): IncidentRef | null => {
  const v = objOf(entry.value);
  if (!entry.key.startsWith('incident-') || v === null) return null;
  const service = objOf(v.service);
  const resolution = str(v.resolution_note);
  return {
    entity_path: entry.entity_path,
    key: entry.key,
    version: entry.version,
    id: clipped(v.id, TEXT_CHARS.name) ?? entry.key.slice('incident-'.length),
    title: clipped(v.title) ?? entry.key,
    status: clipped(v.status, TEXT_CHARS.name) ?? 'unknown',
    service: clipped(service?.name, TEXT_CHARS.name) ?? entry.entity_path.split('/').at(-1) ?? entry.entity_path,
    urgency: clipped(v.urgency, TEXT_CHARS.name),
    assignees: clippedStrings(v.assignees, ASSIGNEES),
    triggered_at: clipped(v.triggered_at, TEXT_CHARS.name) ?? clipped(v.created_at, TEXT_CHARS.name),
    acknowledged_at: clipped(v.acknowledged_at, TEXT_CHARS.name),
    resolved_at: clipped(v.resolved_at, TEXT_CHARS.name),
    ...notesOf(v.notes, v.notes_omitted),
    resolution_note: resolution === null ? null : clipText(resolution, NOTE_CHARS),
  };
};

/**
 * Digests carry the gist of the notes, never all of them: the entry has the full list. Titles
 * and names are cut too (TEXT_CHARS), and an incident lists its first few assignees, so the
 * index of 200 incidents stays small whatever the entries hold.
 */
const NOTE_CHARS = TEXT_CHARS.note;
const ASSIGNEES = 10;

/**
 * The entry lists its newest notes (the connector's INCIDENT_NOTES) and counts the older ones
 * in `notes_omitted`: the count is of them all, the last note the newest listed.
 */
const notesOf = (value: unknown, omitted: unknown): Pick<IncidentRef, 'notes' | 'last_note'> => {
  const notes = Array.isArray(value) ? value.map(objOf).filter((n) => n !== null && str(n.content) !== null) : [];
  const last = notes.at(-1);
  const left = typeof omitted === 'number' && Number.isSafeInteger(omitted) && omitted > 0 ? omitted : 0;
  return {
    notes: notes.length + left,
    last_note: last ? { at: clipped(last.at, TEXT_CHARS.name) ?? '', by: clipped(last.by, TEXT_CHARS.name), content: clipText(str(last.content) ?? '', NOTE_CHARS) } : null,
  };
};

/** Elapsed time between two instants, or null when either is missing or they run backwards. */
const span = (from: string | null, to: string | null): number | null => {
  const [a, b] = [ms(from), ms(to)];
  return a === null || b === null || b < a ? null : b - a;
};

/**
 * Incident facts over the PagerDuty shape (`incident-<id>` with a status and trigger /
 * acknowledge / resolve anchors): `open` counts triggered incidents nobody has
 * acknowledged yet, so open + acknowledged is everything unresolved.
 */
const compileIncidents = (entries: Entry[], now: number): TypedFacts => {
  const refs = sortedByTimeDesc(entries.map(refOf).filter((r): r is IncidentRef => r !== null), (r) => r.triggered_at);
  const facts = factsOf(refs, now);
  facts.incidents = refs.slice(0, DIGEST_LIMITS.index);
  const open_items: OpenItem[] = refs.filter(unresolved).slice(0, DIGEST_LIMITS.openItems).map((r) => ({
    kind: 'incident', entity_path: r.entity_path, key: r.key, title: r.title, status: r.status, since: r.triggered_at,
    detail: { service: r.service, urgency: r.urgency, assignees: r.assignees, last_note: r.last_note?.content ?? null },
  }));
  return { facts: { ...facts }, open_items, headline: headlineOf(facts) };
};

const factsOf = (refs: IncidentRef[], now: number): IncidentFacts => {
  const counts = { open: 0, acknowledged: 0, resolved: 0, total: refs.length };
  const acks = { count: 0, total_ms: 0 };
  const resolutions = { count: 0, total_ms: 0 };
  const services = new Map<string, IncidentFacts['services'][number]>();
  for (const r of refs) {
    if (r.status === 'triggered') counts.open += 1;
    else if (r.status === 'acknowledged') counts.acknowledged += 1;
    else if (r.status === 'resolved') counts.resolved += 1;
    const ack = span(r.triggered_at, r.acknowledged_at);
    if (ack !== null) Object.assign(acks, { count: acks.count + 1, total_ms: acks.total_ms + ack });
    const fix = r.status === 'resolved' ? span(r.triggered_at, r.resolved_at) : null;
    if (fix !== null) Object.assign(resolutions, { count: resolutions.count + 1, total_ms: resolutions.total_ms + fix });
    const s = services.get(r.service) ?? { service: r.service, incidents: 0, unresolved: 0, last_7d: 0, last_triggered_at: null };
    s.incidents += 1;
    if (unresolved(r)) s.unresolved += 1;
    const at = ms(r.triggered_at);
    if (at !== null && now - at <= WEEK_MS) s.last_7d += 1;
    if (at !== null && (s.last_triggered_at === null || at > (ms(s.last_triggered_at) ?? 0))) s.last_triggered_at = r.triggered_at;
    services.set(r.service, s);
  }
  const responders = topCounts(refs.filter(unresolved).flatMap((r) => r.assignees), 10).map(([name, incidents]) => ({ name, incidents }));
  return finish({ counts, acks, resolutions, services: [...services.values()], responders, mtta_ms: null, mttr_ms: null });
};

type ServiceFacts = IncidentFacts['services'][number];
const noisier = (a: ServiceFacts, b: ServiceFacts): number => b.last_7d - a.last_7d || b.incidents - a.incidents || (a.service < b.service ? -1 : 1);

/** The 10 noisiest services, as sorting them all by `noisier` would give (a namespace's roll-up sees every service). */
const noisiest = (services: readonly ServiceFacts[]): ServiceFacts[] => {
  const top: ServiceFacts[] = [];
  for (const s of services) {
    if (top.length === 10 && noisier(s, top[9] as ServiceFacts) >= 0) continue;
    let i = top.length;
    while (i > 0 && noisier(s, top[i - 1] as ServiceFacts) < 0) i--;
    top.splice(i, 0, s);
    if (top.length > 10) top.pop();
  }
  return top;
};

const finish = (f: IncidentFacts): IncidentFacts => ({
  ...f,
  mtta_ms: mean(f.acks.total_ms, f.acks.count),
  mttr_ms: mean(f.resolutions.total_ms, f.resolutions.count),
  services: noisiest(f.services),
});

/**
 * Facts of several scopes as one (source and namespace digests), or of parts combined before:
 * sums, and every service and responder counted (the top 10 are cut by finishRollup, so
 * combining combined parts gives what combining every scope at once gives).
 */
const combineIncidents = (all: IncidentFacts[]): IncidentFacts => {
  const services = new Map<string, IncidentFacts['services'][number]>();
  /** Each service's last trigger in ms (0: none), parsed once. */
  const lastMs = new Map<string, number>();
  const responders = new Map<string, number>();
  const total = { counts: { open: 0, acknowledged: 0, resolved: 0, total: 0 }, acks: { count: 0, total_ms: 0 }, resolutions: { count: 0, total_ms: 0 } };
  for (const f of all) {
    for (const k of ['open', 'acknowledged', 'resolved', 'total'] as const) total.counts[k] += f.counts[k];
    total.acks = { count: total.acks.count + f.acks.count, total_ms: total.acks.total_ms + f.acks.total_ms };
    total.resolutions = { count: total.resolutions.count + f.resolutions.count, total_ms: total.resolutions.total_ms + f.resolutions.total_ms };
    for (const s of f.services) {
      const m = services.get(s.service) ?? { service: s.service, incidents: 0, unresolved: 0, last_7d: 0, last_triggered_at: null };
      const at = ms(s.last_triggered_at) ?? 0;
      // Ties (the same instant written two ways) by code points, not by which part came first.
      const held = lastMs.get(s.service) ?? 0;
      const later = at > held || (at === held && at > 0 && m.last_triggered_at !== null && s.last_triggered_at !== null && compareCodePoints(s.last_triggered_at, m.last_triggered_at) < 0);
      if (later) lastMs.set(s.service, at);
      services.set(s.service, {
        ...m, incidents: m.incidents + s.incidents, unresolved: m.unresolved + s.unresolved, last_7d: m.last_7d + s.last_7d,
        last_triggered_at: later ? s.last_triggered_at : m.last_triggered_at,
      });
    }
    for (const r of f.responders) responders.set(r.name, (responders.get(r.name) ?? 0) + r.incidents);
  }
  return { ...total, services: [...services.values()], responders: [...responders].map(([name, incidents]) => ({ name, incidents })), mtta_ms: null, mttr_ms: null };
};

/** Combined facts as a roll-up's: the 10 noisiest services and busiest responders, means again. */
const finishRollup = (f: IncidentFacts): IncidentFacts => {
  const top = [...f.responders].sort((a, b) => b.incidents - a.incidents || (a.name < b.name ? -1 : 1)).slice(0, 10);
  return finish({ ...f, responders: top });
};

const headlineOf = (f: IncidentFacts): string => {
  const noisy = f.services[0];
  return `${f.counts.open} open, ${f.counts.acknowledged} acknowledged, ${f.counts.resolved} resolved incidents; ` +
    `MTTA ${humanDuration(f.mtta_ms)}, MTTR ${humanDuration(f.mttr_ms)}` +
    (noisy && f.services.length > 1 ? `; noisiest: ${noisy.service} (${noisy.last_7d} in 7 days)` : '') +
    (f.responders.length > 0 ? `; responding: ${f.responders.map((r) => r.name).join(', ')}` : '');
};

/** Incident digests (`incidents/…`): traces join them with repo digests; chat digests link to their open incidents. */
export const INCIDENTS = {
  type: 'incidents',
  order: 0,
  compile: (entries, ctx) => compileIncidents(entries, ctx.now),
  rollup: {
    combine: (all) => ({ ...combineIncidents(all as unknown as IncidentFacts[]) }),
    finish: (combined) => {
      const facts = finishRollup(combined as unknown as IncidentFacts);
      return { facts, headline: headlineOf(facts) };
    },
  },
  crossScope: true,
  timed: true,
  readsOpenIncidents: false,
  indexFacts: ['incidents'],
} satisfies DigestTypeDef;
