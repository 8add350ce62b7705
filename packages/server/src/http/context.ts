import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { validationFailed } from '../domain/errors.ts';
import { AgentIdSchema } from '../domain/names.ts';
import type { Context } from '../services/context.ts';

/** The service Context for an HTTP request: its id, namespace, writer identity and access. */
export const contextOf = (request: FastifyRequest, config: Config): Context => {
  const header = request.headers['x-cairn-agent-id'];
  let agentId = config.agentId;
  if (header !== undefined) {
    const parsed = AgentIdSchema.safeParse(header);
    if (!parsed.success) throw validationFailed([{ field: 'X-Cairn-Agent-Id', message: parsed.error.issues[0]?.message ?? 'invalid' }]);
    agentId = parsed.data;
  }
  const access = request.access;
  // A managed key works in its own namespace; static keys and open mode in the default one.
  const namespace = access && access.namespaces !== '*' ? (access.namespaces[0] ?? config.namespace) : config.namespace;
  return { requestId: request.id, namespace, agentId, ...(access ? { access } : {}) };
};
