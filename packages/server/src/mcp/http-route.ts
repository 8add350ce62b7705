import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { contextOf } from '../http/context.ts';
import { answerError, isBodyNotJson } from '../http/errors.ts';
import type { RoutePlugin } from '../http/http-context.ts';
import { mcpAnswerJson } from './answer-json.ts';
import { McpDispatcher } from './http-dispatch.ts';
import { parseErrorAnswer } from './malformed.ts';
import type { CallScope } from './call-tool.ts';
import { createMcpServer, offeredTools } from './server.ts';
import { SERVED_OPERATIONS, serviceOperations } from './service-operations.ts';

/**
 * MCP over Streamable HTTP at `/mcp`, stateless: no session id is issued, so any replica
 * behind a load balancer can answer any request, with nothing to share or make sticky; these
 * tools need no server-to-client messages that a session would carry. Answers are JSON. GET
 * (a standalone event stream) and DELETE (ending a session) have nothing to serve, so they
 * answer 405, as the transport spec allows.
 *
 * One MCP server serves every request (see http-dispatch.ts); each request's tool calls run
 * with its caller's operations. The API key is checked before this handler runs, by the same
 * onRequest hook as every REST route (http/auth.ts): a missing or wrong key is an HTTP 401,
 * a protocol-level failure.
 */
export const mcpRoutes: RoutePlugin = async (app, { deps }) => {
  const tools = offeredTools(SERVED_OPERATIONS);
  const server = createMcpServer(tools, (extra) => extra.authInfo?.extra?.scope as CallScope);
  const dispatcher = await McpDispatcher.connect(server, tools);
  app.addHook('onClose', async () => server.close());

  // A body that is not JSON is answered as JSON-RPC says (-32700), which an MCP client reads;
  // every other refusal keeps the shape of the rest of the API.
  const errorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
    isBodyNotJson(error) ? reply.status(400).type('application/json').send(parseErrorAnswer()) : answerError(error, request, reply);

  app.post('/mcp', { errorHandler, schema: { summary: 'MCP over Streamable HTTP (stateless; JSON-RPC messages)', tags: ['mcp'] } }, async (request, reply) => {
    const ctx = contextOf(request, deps.config);
    const scope: CallScope = {
      ops: serviceOperations(deps, ctx),
      requestId: request.id,
      onBug: (error) => request.log.error({ err: error }, 'MCP tool failed'),
    };
    const answer = await dispatcher.handle(request.headers, request.body, scope);
    void reply.status(answer.status);
    return answer.status === 202 ? reply.send() : reply.type('application/json').send(mcpAnswerJson(answer.body));
  });

  const notAllowed = (method: string) =>
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: async (_request, reply) =>
        reply
          .status(405)
          .header('allow', 'POST')
          .send({ jsonrpc: '2.0', error: { code: -32000, message: `${method} is not served: this MCP endpoint is stateless; POST JSON-RPC messages` }, id: null }),
    });
  notAllowed('GET');
  notAllowed('DELETE');
};
