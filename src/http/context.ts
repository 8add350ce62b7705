import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { validationFailed } from '../domain/errors.ts';
import { AgentIdSchema } from '../domain/names.ts';
import type { Context } from '../services/context.ts';

/** The service Context for an HTTP request: its id, namespace and writer identity. */
export const contextOf = (request: FastifyRequest, config: Config): Context => {
  const header = request.headers['x-cairn-agent-id'];
  let agentId = config.agentId;
  if (header !== undefined) {
    const parsed = AgentIdSchema.safeParse(header);
    if (!parsed.success) throw validationFailed([{ field: 'X-Cairn-Agent-Id', message: parsed.error.issues[0]?.message ?? 'invalid' }]);
    agentId = parsed.data;
  }
  return { requestId: request.id, namespace: config.namespace, agentId };
};
