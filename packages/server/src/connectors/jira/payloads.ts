import { z } from 'zod';
import { newKeyProblem } from '../../domain/names.ts';

/**
 * The parts of Jira Cloud webhook payloads Cairn reads. Issue events follow the example in
 * Atlassian's webhook documentation (`issue.fields`, `changelog.items[]` with `field`,
 * `fromString`, `toString`); sprint and version events carry the Agile sprint object and the
 * REST version object. Ids arrive as numbers in some objects and strings in others
 * (`version.id` "10000" beside `version.projectId` 10002), so both are accepted.
 */

/** An id that becomes part of a key or path: digits in practice, never anything unprintable. */
const Id = z
  .union([z.number().int().nonnegative(), z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a Jira id')])
  .transform(String);

/** Jira users in Cloud: `accountId` and `displayName` (user names were removed for privacy). */
const User = z.object({ accountId: z.string().nullish(), displayName: z.string().nullish() }).nullish();
const Named = z.object({ name: z.string().nullish() }).nullish();

export const Base = z.object({
  webhookEvent: z.string().min(1).max(128),
  /** Milliseconds since the epoch when Jira raised the event. */
  timestamp: z.number().int().nonnegative().nullish(),
});

const ChangeItem = z.object({
  field: z.string().max(256),
  fieldId: z.string().nullish(),
  fromString: z.string().nullish(),
  toString: z.string().nullish(),
});

export const IssueEvent = Base.extend({
  issue_event_type_name: z.string().nullish(),
  user: User,
  issue: z.object({
    id: Id.nullish(),
    self: z.string().max(2048).nullish(),
    // The entry's key: refused here as a write would refuse it, rather than half-way through the delivery.
    key: z.string().min(1).max(256).refine((k) => newKeyProblem(k) === null, 'must be an issue key without control characters, not "." or ".."'),
    // Required: without it a later event would blank the issue's summary and status.
    fields: z
      .object({
        summary: z.string().nullish(),
        status: z.object({ name: z.string().nullish(), statusCategory: Named }).nullish(),
        issuetype: Named,
        priority: Named,
        resolution: Named,
        assignee: User,
        reporter: User,
        labels: z.array(z.string()).max(1000).nullish(),
        project: z.object({ id: Id.nullish(), key: z.string().min(1).max(256).nullish(), name: z.string().nullish() }).nullish(),
        created: z.string().nullish(),
        updated: z.string().nullish(),
        resolutiondate: z.string().nullish(),
      }),
  }),
  changelog: z.object({ id: Id.nullish(), items: z.array(ChangeItem).max(1000).nullish() }).nullish(),
});
export type IssueEvent = z.output<typeof IssueEvent>;

export const SprintEvent = Base.extend({
  sprint: z.object({
    id: Id,
    name: z.string().max(1024).nullish(),
    state: z.string().max(64).nullish(),
    goal: z.string().max(65536).nullish(),
    startDate: z.string().nullish(),
    endDate: z.string().nullish(),
    completeDate: z.string().nullish(),
    createdDate: z.string().nullish(),
    // The board the sprint was created on: the only link from a sprint to a project.
    originBoardId: Id,
  }),
});
export type SprintEvent = z.output<typeof SprintEvent>;

export const VersionEvent = Base.extend({
  version: z.object({
    id: Id,
    name: z.string().max(1024).nullish(),
    description: z.string().max(65536).nullish(),
    projectId: Id,
    released: z.boolean().nullish(),
    archived: z.boolean().nullish(),
    overdue: z.boolean().nullish(),
    startDate: z.string().nullish(),
    releaseDate: z.string().nullish(),
    userReleaseDate: z.string().nullish(),
  }),
});
export type VersionEvent = z.output<typeof VersionEvent>;
