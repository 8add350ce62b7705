import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { contextOf } from '../http/context.ts';
import type { ServiceDeps } from '../services/context.ts';
import { createMcpServer } from './server.ts';
import { serviceOperations } from './service-operations.ts';
import type { RoutePlugin } from '../http/http-context.ts';

/**
 * MCP over Streamable HTTP at `/mcp`, stateless: each POST gets a fresh server and transport
 * and no session id is issued. Any replica behind a load balancer can then answer any
 * request, with nothing to share or make sticky, and these tools need no server-to-client
 * messages that a session would carry. GET (a standalone event stream) and DELETE (ending a
 * session) have nothing to serve, so they answer 405, as the transport spec allows.
 *
 * The API key is checked before this handler runs, by the same onRequest hook as every REST
 * route (http/auth.ts): a missing or wrong key is an HTTP 401, a protocol-level failure.
 */
export const mcpRoutes: RoutePlugin = async (app, { deps }) => {
  app.post('/mcp', { schema: { summary: 'MCP over Streamable HTTP (stateless; JSON-RPC messages)', tags: ['mcp'] } }, async (request, reply) => {
    const ctx = contextOf(request, deps.config);
    const server = createMcpServer(serviceOperations(deps, ctx), {
      requestId: request.id,
      onBug: (error) => request.log.error({ err: error }, 'MCP tool failed'),
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the response itself; headers set on it first are kept.
    reply.raw.setHeader('x-request-id', request.id);
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
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
