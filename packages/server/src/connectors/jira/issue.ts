import type { EntryValue } from '../../domain/entry.ts';
import type { MappedWrite } from '../connector.ts';
import { countOf, type Fields, fieldsOf, isAmongOmitted, type LifecycleEvent, mergeEvent } from '../lifecycle.ts';
import { pathSegment } from '../parse-json.ts';
import type { IssueEvent } from './payloads.ts';

/** The issue's project key: from its fields, else from the key itself ("PAY-7" → "PAY"). */
export const projectKeyOf = (e: IssueEvent): string => e.issue.fields.project?.key ?? e.issue.key.replace(/-[^-]*$/, '');

/** The browse link people click, derived from the REST `self` link Jira sends. */
const browseUrl = (self: string | null | undefined, key: string): string | null => {
  if (!self) return null;
  try {
    return `${new URL(self).origin}/browse/${encodeURIComponent(key)}`;
  } catch {
    return null;
  }
};

const snapshotOf = (e: IssueEvent): Fields => {
  const f = e.issue.fields;
  return {
    key: e.issue.key,
    id: e.issue.id ?? null,
    summary: f.summary ?? null,
    status: f.status?.name ?? null,
    status_category: f.status?.statusCategory?.name ?? null,
    issue_type: f.issuetype?.name ?? null,
    priority: f.priority?.name ?? null,
    resolution: f.resolution?.name ?? null,
    assignee: f.assignee?.displayName ?? f.assignee?.accountId ?? null,
    reporter: f.reporter?.displayName ?? f.reporter?.accountId ?? null,
    labels: f.labels ?? [],
    project: { key: projectKeyOf(e), name: f.project?.name ?? null, id: f.project?.id ?? null },
    url: browseUrl(e.issue.self, e.issue.key),
    created: f.created ?? null,
    updated: f.updated ?? null,
    resolved: f.resolutiondate ?? null,
    // What this event changed, as Jira's changelog names the fields.
    changed_fields: [...new Set((e.changelog?.items ?? []).map((item) => item.field))],
  };
};

/** The status change in this event's changelog, if it is a transition. */
const transitionOf = (e: IssueEvent) => e.changelog?.items?.find((item) => item.field === 'status' || item.fieldId === 'status');

/**
 * The newest transitions an issue's entry lists; older ones are counted in
 * `transitions_omitted`. Every event about the issue makes a new version of the whole entry,
 * so this bounds what its history grows by per event: some 12 kB of transitions, not 58 kB.
 */
export const ISSUE_TRANSITIONS = 100;

const transitionsOf = (value: unknown): Fields[] =>
  Array.isArray(value) ? value.filter((t): t is Fields => t !== null && typeof t === 'object' && !Array.isArray(t)) : [];

/**
 * Fold one issue event into the issue's entry: the latest event's fields win, status
 * transitions accumulate once each (by changelog id) in time order, and `from_status` /
 * `to_status` name the latest of them whatever order the deliveries came in. The newest
 * ISSUE_TRANSITIONS are listed; those let go are counted in `transitions_omitted` (present once
 * any was) and `transition_count` counts them all. A transition older than every listed one,
 * once some were let go, is taken for one of those delivered again: it is not added back.
 */
const applyIssueEvent = (current: EntryValue | null, e: IssueEvent, eventId: string, at: string): Fields => {
  const prior = fieldsOf(current);
  const listed = transitionsOf(prior?.transitions);
  const omitted = countOf(prior?.transitions_omitted);
  const change = transitionOf(e);
  const event: LifecycleEvent = { id: eventId, at, snapshot: snapshotOf(e) };
  let added = 0;
  if (change) {
    const from = change.fromString ?? null;
    const to = change.toString ?? null;
    const id = e.changelog?.id ? `changelog-${e.changelog.id}` : `${at}:${from}>${to}`;
    const entry = { id, from, to, at, by: e.user?.displayName ?? e.user?.accountId ?? null };
    if (!isAmongOmitted(entry, listed, omitted)) {
      event.mark = { list: 'transitions', entry };
      added = listed.some((t) => t.id === id) ? 0 : 1;
    }
  }
  const merged = mergeEvent(current, event);
  // A list stored longer (an earlier release kept 500) shrinks now: count the ones let go.
  const transitions = transitionsOf(merged.transitions).slice(-ISSUE_TRANSITIONS);
  const leftOut = omitted + listed.length + added - transitions.length;
  const last = transitions.at(-1);
  const { transitions_omitted: _omitted, transition_count: _count, ...rest } = merged;
  return {
    ...rest,
    transitions,
    ...(leftOut > 0 ? { transitions_omitted: leftOut } : {}),
    transition_count: leftOut + transitions.length,
    from_status: last?.from ?? null,
    to_status: last?.to ?? null,
  };
};

export const issueWrite = (e: IssueEvent, eventId: string, at: string): MappedWrite => {
  const kind = e.webhookEvent === 'jira:issue_created' ? 'created' : transitionOf(e) ? 'transitioned' : 'updated';
  return {
    entity_path: `projects/jira/${pathSegment(projectKeyOf(e))}`,
    key: e.issue.key,
    event_type: `issue.${kind}`,
    confidence: 1,
    update: (current) => applyIssueEvent(current, e, eventId, at),
  };
};
