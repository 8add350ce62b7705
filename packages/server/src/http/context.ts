import { isUtf8 } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { validationFailed } from '../domain/errors.ts';
import { AgentIdSchema } from '../domain/names.ts';
import type { Context } from '../services/context.ts';

/**
 * A header's text read as UTF-8. Node hands header values over one character per byte
 * (Latin-1), so an agent id `bø-agent` sent as UTF-8 arrived as `bÃ¸-agent`. Bytes that are not
 * UTF-8 are left as they came, which the id's own rules then refuse or keep as Latin-1 text.
 */
const utf8Header = (value: string): string => {
  if (/^[\x00-\x7f]*$/.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : value;
};

/**
 * Whether a header came more than once. headersDistinct is Node's; a request made without a
 * socket (fastify's inject) has only rawHeaders, names and values alternating.
 */
const sentTwice = (request: FastifyRequest, name: string): boolean => {
  const distinct = request.raw.headersDistinct as Record<string, string[] | undefined> | undefined;
  if (distinct) return (distinct[name]?.length ?? 0) > 1;
  const raw = request.raw.rawHeaders ?? [];
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) seen += 1;
  return seen > 1;
};

/** The service Context for an HTTP request: its id, namespace, writer identity and access. */
export const contextOf = (request: FastifyRequest, config: Config): Context => {
  // Node joins a header sent twice into "a, b", which would be taken as one agent's id.
  if (sentTwice(request, 'x-cairn-agent-id')) {
    throw validationFailed([{ field: 'X-Cairn-Agent-Id', message: 'sent more than once; send one agent id' }]);
  }
  const header = request.headers['x-cairn-agent-id'];
  let agentId = config.agentId;
  if (header !== undefined) {
    const parsed = AgentIdSchema.safeParse(typeof header === 'string' ? utf8Header(header) : header);
    if (!parsed.success) throw validationFailed([{ field: 'X-Cairn-Agent-Id', message: parsed.error.issues[0]?.message ?? 'invalid' }]);
    agentId = parsed.data;
  }
  const access = request.access;
  // A managed key works in its own namespace; static keys and open mode in the default one.
  const namespace = access && access.namespaces !== '*' ? (access.namespaces[0] ?? config.namespace) : config.namespace;
  return { requestId: request.id, namespace, agentId, ...(access ? { access } : {}) };
};
