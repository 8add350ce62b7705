import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { contextOf } from '../http/context.ts';
import { answerError, isBodyNotJson, meetDamagedData } from '../http/errors.ts';
import type { RoutePlugin } from '../http/http-context.ts';
import { ErrorResponse } from '../http/routes/error-schema.ts';
import { mcpAnswerJson } from './answer-json.ts';
import type { McpDispatcher } from './http-dispatch.ts';
import { INVALID_REQUEST, errorAnswer, parseErrorAnswer, tooLargeMessage } from './malformed.ts';
import type { CallScope } from './call-tool.ts';
import { SERVED_OPERATIONS, serviceOperations } from './service-operations.ts';

/** A JSON-RPC 2.0 answer: a result, or an error (-32700/-32600/-32601/-32602/-32603, -32001 for a refused key). */
const RpcAnswer = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.record(z.string(), z.unknown()).optional().describe('initialize, tools/list or tools/call (a tool error is a result with isError: true)'),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});

/** What POST /mcp answers: one answer per request, an array for a batch; 202 and no body when it held only notifications or responses. */
const MCP_ANSWERS = {
  200: z.union([RpcAnswer, z.array(RpcAnswer)]).describe('The answer to a request, or the answers to a batch in order.'),
  202: z.null().describe('Only notifications or responses were sent: nothing to answer.'),
  400: RpcAnswer.describe('A body that is not JSON: a JSON-RPC error -32700 with id null.'),
  ...ErrorResponse,
  413: RpcAnswer.describe('A body over 1 MiB: a JSON-RPC error -32600 with id null, naming its size (the limit of a message on every transport).'),
};

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
export const mcpRoutes: RoutePlugin = async (app, { deps, metrics }) => {
  // The MCP SDK and the tools' listing (their schemas as JSON Schema) take about 0.2 s to load:
  // the first message to /mcp loads them, not every start of a server that may never see one.
  let connecting: Promise<{ dispatcher: McpDispatcher; close: () => Promise<void> }> | null = null;
  const connect = async () => {
    const [{ McpDispatcher }, { createMcpServer, offeredTools }] = await Promise.all([import('./http-dispatch.ts'), import('./server.ts')]);
    const tools = offeredTools(SERVED_OPERATIONS);
    const server = createMcpServer(tools, (extra) => extra.authInfo?.extra?.scope as CallScope);
    return { dispatcher: await McpDispatcher.connect(server, tools), close: () => server.close() };
  };
  const mcp = () => (connecting ??= connect().catch((error: unknown) => {
    connecting = null; // a failed load is tried again by the next message, not remembered
    throw error;
  }));
  app.addHook('onClose', async () => {
    const open = await connecting?.catch(() => null);
    await open?.close();
  });

  // A body that is not JSON is answered as JSON-RPC says (-32700), and one over 1 MiB with the
  // refusal `cairn mcp` gives a line over 1 MiB (-32600, naming its size), which an MCP client
  // reads; every other refusal keeps the shape of the rest of the API.
  const errorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (isBodyNotJson(error)) return reply.status(400).type('application/json').send(parseErrorAnswer());
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const length = Number(request.headers['content-length']);
      const message = tooLargeMessage(Number.isSafeInteger(length) && length > 0 ? length : undefined);
      return reply.status(413).type('application/json').send(errorAnswer(null, INVALID_REQUEST, message));
    }
    return answerError(error, request, reply);
  };

  app.post('/mcp', { errorHandler, schema: { summary: 'MCP over Streamable HTTP (stateless; JSON-RPC messages)', tags: ['mcp'], response: MCP_ANSWERS } }, async (request, reply) => {
    const ctx = contextOf(request, deps.config);
    const scope: CallScope = {
      ops: serviceOperations(deps, ctx),
      requestId: request.id,
      onBug: (error) => request.log.error({ err: error }, 'MCP tool failed'),
      onDamaged: (error) => void meetDamagedData(error, request.log, () => metrics.damagedData.inc()),
    };
    const { dispatcher } = await mcp();
    const answer = await dispatcher.handle(request.headers, request.body, scope);
    void reply.status(answer.status);
    return answer.status === 202 ? reply.send() : reply.type('application/json').send(mcpAnswerJson(answer.body));
  });

  // Every other method (OPTIONS too: no CORS preflight is served) gets the same answer here,
  // not the app's 405 for unrouted methods, which would list these refusals as methods the
  // path serves.
  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'],
    url: '/mcp',
    schema: { hide: true },
    handler: async (request, reply) =>
      reply
        .status(405)
        .header('allow', 'POST')
        .send({ jsonrpc: '2.0', error: { code: -32000, message: `${request.method} is not served: this MCP endpoint is stateless; POST JSON-RPC messages` }, id: null }),
  });
};
