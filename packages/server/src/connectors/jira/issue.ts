import type { EntryValue } from '../../domain/entry.ts';
import type { MappedWrite } from '../connector.ts';
import { type Fields, type LifecycleEvent, mergeEvent } from '../lifecycle.ts';
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
 * Fold one issue event into the issue's entry: the latest event's fields win, status
 * transitions accumulate once each (by changelog id) in time order, and `from_status` /
 * `to_status` name the latest of them whatever order the deliveries came in.
 */
const applyIssueEvent = (current: EntryValue | null, e: IssueEvent, eventId: string, at: string): Fields => {
  const change = transitionOf(e);
  const event: LifecycleEvent = { id: eventId, at, snapshot: snapshotOf(e) };
  if (change) {
    const from = change.fromString ?? null;
    const to = change.toString ?? null;
    const id = e.changelog?.id ? `changelog-${e.changelog.id}` : `${at}:${from}>${to}`;
    event.mark = { list: 'transitions', entry: { id, from, to, at, by: e.user?.displayName ?? e.user?.accountId ?? null } };
  }
  const merged = mergeEvent(current, event);
  const transitions = Array.isArray(merged.transitions) ? (merged.transitions as Fields[]) : [];
  const last = transitions.at(-1);
  return { ...merged, transitions, from_status: last?.from ?? null, to_status: last?.to ?? null };
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
