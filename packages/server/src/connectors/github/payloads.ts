import { z } from 'zod';

/**
 * The parts of GitHub webhook payloads Cairn reads; everything else is ignored. Only the
 * identifiers are required: GitHub's own examples omit other fields on some actions.
 */

const Repository = z.object({
  name: z.string().min(1),
  full_name: z.string().optional(),
  owner: z.object({ login: z.string().min(1) }),
});
const User = z.object({ login: z.string() }).nullish();
const Label = z.object({ name: z.string() });

export const PullRequestEvent = z.object({
  action: z.string(),
  number: z.number().int(),
  pull_request: z.object({
    number: z.number().int(),
    title: z.string().nullish(),
    body: z.string().nullish(),
    state: z.string().nullish(),
    merged: z.boolean().nullish(),
    merged_at: z.string().nullish(),
    closed_at: z.string().nullish(),
    created_at: z.string().nullish(),
    html_url: z.string().nullish(),
    user: User,
    additions: z.number().int().nullish(),
    deletions: z.number().int().nullish(),
    changed_files: z.number().int().nullish(),
    head: z.object({ ref: z.string() }).nullish(),
    base: z.object({ ref: z.string() }).nullish(),
    labels: z.array(Label).nullish(),
  }),
  repository: Repository,
  sender: User,
});

export const DeploymentStatusEvent = z.object({
  action: z.string().optional(),
  deployment_status: z.object({
    id: z.number().int(),
    state: z.string(),
    environment: z.string().nullish(),
    description: z.string().nullish(),
    target_url: z.string().nullish(),
    created_at: z.string().nullish(),
  }),
  deployment: z.object({
    id: z.number().int(),
    sha: z.string().nullish(),
    ref: z.string().nullish(),
    environment: z.string(),
    created_at: z.string().nullish(),
    creator: User,
  }),
  repository: Repository,
});

export const IssuesEvent = z.object({
  action: z.string(),
  issue: z.object({
    number: z.number().int(),
    title: z.string().nullish(),
    state: z.string().nullish(),
    html_url: z.string().nullish(),
    user: User,
    labels: z.array(Label).nullish(),
    created_at: z.string().nullish(),
    closed_at: z.string().nullish(),
  }),
  label: Label.nullish(),
  repository: Repository,
  sender: User,
});
