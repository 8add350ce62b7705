import type { Entry } from '../../domain/entry.ts';
import { DAY_MS, type DigestTypeDef, DIGEST_LIMITS, type OpenItem, type TypedFacts } from '../digest-types.ts';
import { byTimeDesc, canonicalOrder, clipped, ms, objOf, percent, ratio, small, TEXT_CHARS } from '../fields.ts';
import { countEntries, orderedCounts } from './counts.ts';

const name = (value: unknown): string | null => clipped(value, TEXT_CHARS.name);

export interface SprintRef {
  entity_path: string;
  key: string;
  name: string;
  start_date: string | null;
  end_date: string | null;
  /** Share of the sprint's time already gone, 0–100. */
  time_elapsed_pct: number | null;
  days_left: number | null;
}

export interface ReleaseRef {
  key: string;
  name: string;
  release_date: string | null;
}

export interface ProjectFacts {
  issues: { total: number; open: number; by_status: Record<string, number>; by_category: Record<string, number> };
  /**
   * Jira's issue webhooks do not say which sprint an issue is in, so progress is the
   * project's done share beside the active sprint's elapsed time.
   */
  sprint: { active: SprintRef[]; closed: number; issues_done: number; issues_total: number; done_pct: number | null };
  releases: { released: number; unreleased: number; latest: ReleaseRef | null; next: ReleaseRef | null };
}

const DONE_STATUSES = new Set(['done', 'closed', 'resolved']);
const isDone = (category: string | null, status: string | null): boolean =>
  category !== null ? category.toLowerCase() === 'done' : DONE_STATUSES.has((status ?? '').toLowerCase());

const sprintOf = (e: Entry, now: number): SprintRef => {
  const v = objOf(e.value) ?? {};
  const [start, end] = [ms(v.start_date), ms(v.end_date)];
  return {
    entity_path: e.entity_path, key: e.key, name: name(v.name) ?? e.key, start_date: name(v.start_date), end_date: name(v.end_date),
    time_elapsed_pct: start !== null && end !== null && end > start ? Math.round(Math.min(1, Math.max(0, (now - start) / (end - start))) * 100) : null,
    days_left: end !== null ? Math.max(0, Math.ceil((end - now) / DAY_MS)) : null,
  };
};

/**
 * Project facts over the Jira shape (`<ISSUE-KEY>`, `sprint-<id>`, `release-<id>`): issues
 * per status and status category, sprint progress, releases done and next.
 */
const compileProjects = (entries: Entry[], now: number): TypedFacts => {
  const facts: ProjectFacts = {
    issues: { total: 0, open: 0, by_status: {}, by_category: {} },
    sprint: { active: [], closed: 0, issues_done: 0, issues_total: 0, done_pct: null },
    releases: { released: 0, unreleased: 0, latest: null, next: null },
  };
  const open_items: OpenItem[] = [];
  const released: ReleaseRef[] = [];
  const pending: ReleaseRef[] = [];
  for (const e of entries) {
    const v = objOf(e.value);
    if (v === null) continue;
    if (e.key.startsWith('sprint-')) {
      if (v.state === 'active') facts.sprint.active.push(sprintOf(e, now));
      else if (v.state === 'closed') facts.sprint.closed += 1;
    } else if (e.key.startsWith('release-')) {
      const ref = { key: e.key, name: name(v.name) ?? e.key, release_date: name(v.release_date) };
      (v.released === true ? released : pending).push(ref);
    } else if ('status' in v) {
      const status = name(v.status) ?? 'Unknown';
      const category = name(v.status_category);
      facts.issues.total += 1;
      facts.issues.by_status[status] = (facts.issues.by_status[status] ?? 0) + 1;
      facts.issues.by_category[category ?? 'Unknown'] = (facts.issues.by_category[category ?? 'Unknown'] ?? 0) + 1;
      if (isDone(category, status)) facts.sprint.issues_done += 1;
      else {
        facts.issues.open += 1;
        open_items.push({ kind: 'issue', entity_path: e.entity_path, key: e.key, title: clipped(v.summary) ?? e.key, status, since: name(v.created) ?? e.created_at, detail: { assignee: small(v.assignee), priority: small(v.priority), category } });
      }
    }
  }
  facts.sprint.issues_total = facts.issues.total;
  facts.sprint.done_pct = ratio(facts.sprint.issues_done, facts.issues.total);
  facts.issues.by_status = orderedCounts(facts.issues.by_status);
  facts.issues.by_category = orderedCounts(facts.issues.by_category);
  facts.releases = releasesOf(released, pending);
  for (const s of facts.sprint.active) open_items.push({ kind: 'sprint', entity_path: s.entity_path, key: s.key, title: s.name, status: 'active', since: s.start_date, detail: { end_date: s.end_date, time_elapsed_pct: s.time_elapsed_pct } });
  // In-progress work first: it is what someone is doing right now.
  const rank = (i: OpenItem) => (i.kind === 'sprint' ? 0 : String(i.detail?.category ?? '').toLowerCase() === 'in progress' ? 1 : 2);
  const items = open_items.sort((a, b) => rank(a) - rank(b) || byTimeDesc<OpenItem>((i) => i.since)(a, b)).slice(0, DIGEST_LIMITS.openItems);
  return { facts: { ...facts }, open_items: items, headline: headlineOf(facts) };
};

const releasesOf = (released: ReleaseRef[], pending: ReleaseRef[]): ProjectFacts['releases'] => ({
  released: released.length,
  unreleased: pending.length,
  latest: released.sort((a, b) => byTimeDesc<ReleaseRef>((r) => r.release_date)(a, b) || canonicalOrder(a, b))[0] ?? null,
  next: pending.filter((r) => r.release_date !== null).sort((a, b) => (ms(a.release_date) ?? 0) - (ms(b.release_date) ?? 0) || canonicalOrder(a, b))[0] ?? null,
});

const mergeProjects = (all: ProjectFacts[]): ProjectFacts => {
  const out: ProjectFacts = {
    issues: { total: 0, open: 0, by_status: {}, by_category: {} },
    sprint: { active: [], closed: 0, issues_done: 0, issues_total: 0, done_pct: null },
    releases: { released: 0, unreleased: 0, latest: null, next: null },
  };
  const latest: ReleaseRef[] = [];
  const next: ReleaseRef[] = [];
  for (const f of all) {
    out.issues.total += f.issues.total;
    out.issues.open += f.issues.open;
    for (const [k, n] of countEntries(f.issues.by_status)) out.issues.by_status[k] = (out.issues.by_status[k] ?? 0) + n;
    for (const [k, n] of countEntries(f.issues.by_category)) out.issues.by_category[k] = (out.issues.by_category[k] ?? 0) + n;
    out.sprint.active.push(...f.sprint.active);
    out.sprint.closed += f.sprint.closed;
    out.sprint.issues_done += f.sprint.issues_done;
    out.releases.released += f.releases.released;
    out.releases.unreleased += f.releases.unreleased;
    if (f.releases.latest) latest.push(f.releases.latest);
    if (f.releases.next) next.push(f.releases.next);
  }
  // Active sprints of every part, in one order whatever order the parts came in (the headline names the first).
  out.sprint.active.sort(canonicalOrder);
  out.sprint.issues_total = out.issues.total;
  out.sprint.done_pct = ratio(out.sprint.issues_done, out.issues.total);
  out.issues.by_status = orderedCounts(out.issues.by_status);
  out.issues.by_category = orderedCounts(out.issues.by_category);
  const { latest: l, next: n } = releasesOf(latest, next);
  out.releases.latest = l;
  out.releases.next = n;
  return out;
};

const headlineOf = (f: ProjectFacts): string => {
  // Largest count first, ties by name: never the order the stored map happens to hold (see counts.ts).
  const statuses = countEntries(f.issues.by_status).map(([s, n]) => `${n} ${s}`).join(', ');
  const sprint = f.sprint.active[0];
  return `${f.issues.total} issues (${statuses || 'none'}); ${percent(f.sprint.done_pct)} done` +
    (sprint ? `; sprint "${sprint.name}" ${sprint.time_elapsed_pct ?? '?'}% elapsed, ${sprint.days_left ?? '?'} days left` : '') +
    `; ${f.releases.released} released, ${f.releases.unreleased} unreleased` + (f.releases.next ? `; next: ${f.releases.next.name} on ${f.releases.next.release_date}` : '');
};

/** Project digests (`projects/…`). */
export const PROJECTS = {
  type: 'projects',
  order: 2,
  compile: (entries, ctx) => compileProjects(entries, ctx.now),
  // Merged facts merge again as their parts would: sums, every active sprint, the latest and next release.
  rollup: {
    combine: (all) => ({ ...mergeProjects(all as unknown as ProjectFacts[]) }),
    finish: (combined) => ({ facts: combined, headline: headlineOf(combined as unknown as ProjectFacts) }),
  },
  crossScope: false,
  timed: true,
  readsOpenIncidents: false,
  indexFacts: [],
} satisfies DigestTypeDef;
