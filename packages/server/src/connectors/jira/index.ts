import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseInput } from '../../domain/parse-input.ts';
import { type Connector, type ConnectorSettings, type Delivery, type MappedWrite, NOTHING_RECALLED, type Outcome, type Recollection, type Remembered } from '../connector.ts';
import { isoOf, notAfterReceipt } from '../lifecycle.ts';
import { objectOr, parseJsonBody, peekJson, stringOr } from '../parse-json.ts';
import { verifySha256Header } from '../signatures.ts';
import { issueWrite, projectKeyOf } from './issue.ts';
import { boardsOf, issueFacts, jiraWants, learnedProjects } from './learned.ts';
import { Base, IssueEvent, SprintEvent, VersionEvent } from './payloads.ts';
import { isSprintEvent, isVersionEvent, sprintWrite, versionWrite } from './planning.ts';

const ISSUE_EVENTS = new Set(['jira:issue_created', 'jira:issue_updated']);

/**
 * Jira's delivery id is `X-Atlassian-Webhook-Identifier`, stable across retries. Without it
 * (a proxy dropped it, an older Jira) the body itself identifies the delivery: Jira's
 * `timestamp` in it makes two real events differ while a retry stays byte-identical.
 */
const deliveryIdOf = (delivery: Delivery): string => {
  const header = delivery.headers['x-atlassian-webhook-identifier']?.trim();
  return header ? header : `sha256:${createHash('sha256').update(delivery.body).digest('hex')}`;
};

/**
 * Jira Cloud webhooks: issues created and updated (status transitions kept, from/to) under
 * `projects/jira/<PROJECT>` / `<ISSUE-KEY>`; sprints started and closed as `sprint-<id>`;
 * versions created and released as `release-<id>`.
 */
export const jira: Connector = {
  name: 'jira',
  title: 'Jira',
  hint: 'Jira settings → System → WebHooks → Create a WebHook: paste the URL, the secret as Secret; events: Issue created / updated, Sprint started / closed, Version created / released.',
  // Admin webhooks cannot add headers, so the API key rides in the URL.
  sendsHeaders: false,

  verify: (delivery: Delivery, secret: string) =>
    verifySha256Header(delivery.headers['x-hub-signature'], secret, delivery.body, 'X-Hub-Signature'),

  peek: (delivery: Delivery) => ({
    event: stringOr(peekJson(delivery.body)?.webhookEvent),
    deliveryId: delivery.headers['x-atlassian-webhook-identifier']?.trim() || null,
  }),

  wants: (delivery: Delivery) => jiraWants(peekJson(delivery.body)),

  handle(delivery: Delivery, settings: ConnectorSettings, recalled: Recollection = NOTHING_RECALLED): Outcome {
    const deliveryId = deliveryIdOf(delivery);
    const raw = parseJsonBody(delivery.body, z.record(z.string(), z.unknown()));
    const base = parseInput(Base, raw);
    // Jira's clock orders events that arrive out of order; our receipt time is the fallback,
    // and the bound (a time far ahead of receipt would hold the entry against later events).
    const at = notAfterReceipt(isoOf(base.timestamp) ?? new Date(delivery.now).toISOString(), delivery.now);
    const mapped = mapEvent(base.webhookEvent, raw, settings, recalled, deliveryId, at, delivery.now);
    if (!mapped) return { kind: 'ignored', deliveryId, reason: `Jira event ${JSON.stringify(base.webhookEvent.slice(0, 64))} is not captured` };
    return { kind: 'writes', deliveryId, writes: [mapped.write], learn: mapped.learn };
  },

  learnedSettings: (facts) => ({ learned_projects: learnedProjects(facts) }),
};

const mapEvent = (name: string, raw: Record<string, unknown>, settings: ConnectorSettings, recalled: Recollection, eventId: string, at: string, now: number): { write: MappedWrite; learn: Remembered[] } | null => {
  if (ISSUE_EVENTS.has(name)) {
    const e = parseInput(IssueEvent, raw);
    const boards = boardsOf(objectOr(objectOr(raw.issue)?.fields));
    return { write: issueWrite(e, eventId, notAfterReceipt(isoOf(e.timestamp) ?? isoOf(e.issue.fields.updated) ?? at, now)), learn: issueFacts(e.issue.fields.project?.id ?? null, projectKeyOf(e), boards, recalled) };
  }
  if (isSprintEvent(name)) return { write: sprintWrite(parseInput(SprintEvent, raw), settings, recalled, eventId, at), learn: [] };
  if (isVersionEvent(name)) return { write: versionWrite(parseInput(VersionEvent, raw), settings, recalled, eventId, at), learn: [] };
  return null;
};
