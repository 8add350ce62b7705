import { ForgetInput, forgetEntries } from '../../services/admin/forget-entries.ts';
import {
  PolicyTargetInput,
  SetPolicyInput,
  deleteRetentionPolicy,
  listRetentionPolicies,
  setRetentionPolicy,
} from '../../services/retention/retention-policies.ts';
import { runRetentionNow } from '../../services/retention/run-retention-now.ts';
import type { ServiceDeps } from '../../services/context.ts';
import { NOTHING_OR_EMPTY_OBJECT } from '../body-policy.ts';
import { contextOf } from '../context.ts';
import { ForgetResultSchema, NoContent, RetentionPolicyListSchema, RetentionPolicySchema, RetentionRunSchema } from './admin-schemas.ts';
import { ErrorResponse } from './error-schema.ts';
import type { FastifyInstance } from 'fastify';

const tags = ['admin'];

/** Forget and retention (admin scope, like every /api/v1/admin route); kept apart from admin.ts. */
export const forgetAdminRoutes = async (app: FastifyInstance, deps: ServiceDeps): Promise<void> => {
  const ctx = (request: Parameters<typeof contextOf>[0]) => contextOf(request, deps.config);

  app.post(
    '/api/v1/admin/forget',
    {
      schema: {
        summary: 'Forget an entry, or every entry under a path, with all versions, everywhere (audited; irreversible)',
        tags,
        body: ForgetInput,
        response: { 200: ForgetResultSchema, ...ErrorResponse },
      },
    },
    async (request) => forgetEntries(deps, ctx(request), request.body),
  );
  app.get(
    '/api/v1/admin/retention',
    { schema: { summary: "The namespace's retention policies", tags, querystring: PolicyTargetInput.pick({ namespace: true }), response: { 200: RetentionPolicyListSchema, ...ErrorResponse } } },
    async (request) => listRetentionPolicies(deps, ctx(request), request.query),
  );
  app.put(
    '/api/v1/admin/retention',
    { schema: { summary: 'Set the retention policy of a namespace or path prefix (keep the newest N versions and/or the last D days)', tags, body: SetPolicyInput, response: { 200: RetentionPolicySchema, ...ErrorResponse } } },
    async (request) => setRetentionPolicy(deps, ctx(request), request.body),
  );
  app.delete(
    '/api/v1/admin/retention',
    { schema: { summary: 'Remove a retention policy (history is kept again from now on)', tags, querystring: PolicyTargetInput, response: { 204: NoContent('Removed'), ...ErrorResponse } } },
    async (request, reply) => {
      await deleteRetentionPolicy(deps, ctx(request), request.query);
      return reply.status(204).send();
    },
  );
  app.post(
    '/api/v1/admin/retention/run',
    { schema: { summary: 'Run a retention pass now: drop expired versions, compact, expire old dedup records and audit batches', tags, body: NOTHING_OR_EMPTY_OBJECT, response: { 200: RetentionRunSchema, ...ErrorResponse } } },
    async (request) => runRetentionNow(deps, ctx(request)),
  );
};
