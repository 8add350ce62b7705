import { z } from 'zod';
import { CreateKeyInput, createKey } from '../../services/admin/create-key.ts';
import { ListAuditInput, listAudit } from '../../services/admin/list-audit.ts';
import { ListKeysInput, listKeys } from '../../services/admin/list-keys.ts';
import { CreateTeamInput, SetMembersInput, createTeam, deleteTeam, listTeams, setTeamMembers } from '../../services/admin/manage-teams.ts';
import { revokeKey } from '../../services/admin/revoke-key.ts';
import { contextOf } from '../context.ts';
import { forgetAdminRoutes } from './admin-forget.ts';
import { AuditPageSchema, IssuedKeySchema, KeyListSchema, NoContent, TeamListSchema, TeamSchema } from './admin-schemas.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

const tags = ['admin'];
const IdParams = z.object({ id: z.string() });
const NameParams = z.object({ name: z.string() });
const NamespaceQuery = z.object({ namespace: z.string().optional() });

/** Managed API keys, teams and the audit log (SPEC §5, §6); every route needs the admin scope. */
export const adminRoutes: RoutePlugin = async (app, { deps, keys }) => {
  const ctx = (request: Parameters<typeof contextOf>[0]) => contextOf(request, deps.config);

  app.post('/api/v1/admin/keys', { schema: { summary: 'Issue an API key (the key is shown in this answer only)', tags, body: CreateKeyInput, response: { 201: IssuedKeySchema, ...ErrorResponse } } }, async (request, reply) => {
    const issued = await createKey(deps, ctx(request), request.body);
    // The first key ends open mode: on this replica with the next request, not after the
    // resolver's cache runs out (every request was let in meanwhile, keyless or not).
    keys.forget(issued.id);
    return reply.status(201).send(issued);
  });
  app.get('/api/v1/admin/keys', { schema: { summary: 'Managed keys (never their secrets)', tags, querystring: ListKeysInput, response: { 200: KeyListSchema, ...ErrorResponse } } }, async (request) =>
    listKeys(deps, ctx(request), request.query),
  );
  app.delete('/api/v1/admin/keys/:id', { schema: { summary: 'Revoke a key (every replica refuses it within seconds)', tags, params: IdParams, response: { 204: NoContent('Revoked'), ...ErrorResponse } } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    await revokeKey(deps, ctx(request), id);
    keys.forget(id);
    return reply.status(204).send();
  });

  app.post('/api/v1/admin/teams', { schema: { summary: 'Create a team', tags, body: CreateTeamInput, response: { 201: TeamSchema, ...ErrorResponse } } }, async (request, reply) =>
    reply.status(201).send(await createTeam(deps, ctx(request), request.body)),
  );
  app.get('/api/v1/admin/teams', { schema: { summary: 'Teams and their members', tags, querystring: NamespaceQuery, response: { 200: TeamListSchema, ...ErrorResponse } } }, async (request) =>
    listTeams(deps, ctx(request), request.query),
  );
  app.put('/api/v1/admin/teams/:name/members', { schema: { summary: "Replace a team's members", tags, params: NameParams, body: SetMembersInput, response: { 200: TeamSchema, ...ErrorResponse } } }, async (request) =>
    setTeamMembers(deps, ctx(request), (request.params as { name: string }).name, request.body),
  );
  app.delete('/api/v1/admin/teams/:name', { schema: { summary: 'Delete a team', tags, params: NameParams, querystring: NamespaceQuery, response: { 204: NoContent('Deleted'), ...ErrorResponse } } }, async (request, reply) => {
    await deleteTeam(deps, ctx(request), (request.params as { name: string }).name, request.query);
    return reply.status(204).send();
  });

  await forgetAdminRoutes(app, deps);

  app.get('/api/v1/admin/audit', { schema: { summary: 'The audit log, newest first', tags, querystring: ListAuditInput, response: { 200: AuditPageSchema, ...ErrorResponse } } }, async (request) =>
    listAudit(deps, ctx(request), request.query),
  );
};
