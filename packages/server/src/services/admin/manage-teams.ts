import { z } from 'zod';
import { ServiceError } from '../../domain/errors.ts';
import { NamespaceSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import { recordAudit } from '../audit-log.ts';
import { namespaceFor, requireScope, requireWholeNamespace } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { allKeyRecords } from './key-records.ts';
import { Members, TeamName, type TeamRecord, teamsCollection } from './team-records.ts';

export const CreateTeamInput = z.object({ name: TeamName, members: Members.default([]), namespace: NamespaceSchema.optional() }).strict();
export const SetMembersInput = z.object({ members: Members, namespace: NamespaceSchema.optional() }).strict();

/** Teams group members; keys can be issued to a team (see create-key.ts). */
export const createTeam = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<TeamRecord> => {
  requireScope(ctx, 'admin');
  requireWholeNamespace(ctx, 'a team');
  const input = parseInput(CreateTeamInput, raw);
  const namespace = namespaceFor(ctx, input.namespace);
  const team: TeamRecord = { name: input.name, members: [...new Set(input.members)], created_at: new Date(deps.now()).toISOString() };
  if (!(await deps.store.createRecord(teamsCollection(namespace), input.name, { ...team }))) {
    throw new ServiceError('CONFLICT', `team "${input.name}" already exists`);
  }
  await recordAudit(deps, ctx, namespace, { action: 'team.created', target: { team: input.name }, changes: { members: team.members } });
  return team;
};

export const listTeams = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<{ teams: TeamRecord[] }> => {
  requireScope(ctx, 'admin');
  const namespace = namespaceFor(ctx, parseInput(z.object({ namespace: NamespaceSchema.optional() }), raw).namespace);
  const records = await deps.store.listRecords(teamsCollection(namespace), { limit: 1000 });
  return { teams: records.map((r) => r.data as unknown as TeamRecord) };
};

/**
 * The team a path names, as stored: a name no team could have (too long, a control character)
 * names none, so it is 404. Cut to 64 characters instead, as it was, `<name>x` read the team
 * `<name>` while the write went to a record of its own (two teams listed with one name), and
 * a delete of `<name>x` passed the live-key check, made under the whole name, and deleted
 * `<name>` under its live keys.
 */
const teamNamed = (name: string): string => {
  if (!TeamName.safeParse(name).success) throw new ServiceError('NOT_FOUND', `no team "${name.slice(0, 64)}"`);
  return name;
};

/** Replace a team's members (the caller sends the full list it wants). */
export const setTeamMembers = async (deps: ServiceDeps, ctx: Context, name: string, raw: unknown): Promise<TeamRecord> => {
  requireScope(ctx, 'admin');
  requireWholeNamespace(ctx, 'a team');
  const input = parseInput(SetMembersInput, raw);
  const namespace = namespaceFor(ctx, input.namespace);
  const stored = await deps.store.getRecord(teamsCollection(namespace), teamNamed(name));
  if (!stored) throw new ServiceError('NOT_FOUND', `no team "${name}"`);
  const before = stored.data as unknown as TeamRecord;
  const team: TeamRecord = { ...before, members: [...new Set(input.members)] };
  await deps.store.putRecord(teamsCollection(namespace), name, { ...team });
  await recordAudit(deps, ctx, namespace, { action: 'team.members_set', target: { team: name }, changes: { before: before.members, after: team.members } });
  return team;
};

export const deleteTeam = async (deps: ServiceDeps, ctx: Context, name: string, raw: unknown): Promise<void> => {
  requireScope(ctx, 'admin');
  requireWholeNamespace(ctx, 'a team');
  const namespace = namespaceFor(ctx, parseInput(z.object({ namespace: NamespaceSchema.optional() }), raw).namespace);
  teamNamed(name);
  // A key is issued to a team that exists (create-key.ts); deleting the team under a live key
  // would leave the key naming a team no one can find or manage.
  const holders = await liveKeysOfTeam(deps, namespace, name);
  if (holders.length > 0) {
    throw new ServiceError('CONFLICT', `team "${name}" has ${holders.length} live key(s) (${holders.slice(0, 5).join(', ')}${holders.length > 5 ? ', …' : ''}); revoke them first`);
  }
  if (!(await deps.store.deleteRecord(teamsCollection(namespace), name))) throw new ServiceError('NOT_FOUND', `no team "${name}"`);
  await recordAudit(deps, ctx, namespace, { action: 'team.deleted', target: { team: name } });
};

/** The ids of the namespace's managed keys issued to `team` and not revoked. */
const liveKeysOfTeam = async (deps: ServiceDeps, namespace: string, team: string): Promise<string[]> => {
  const ids: string[] = [];
  for await (const { id, record } of allKeyRecords(deps.store)) {
    if (record.namespace === namespace && record.team === team && record.revoked_at === null) ids.push(id);
  }
  return ids;
};
