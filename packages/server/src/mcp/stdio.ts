import { CairnClient } from 'cairn-memory-client';
import type { ClientOptions } from 'cairn-memory-client';
import { clientOperations } from './client-operations.ts';
import type { OperationName } from './operations.ts';
import { ParamsCheckedTransport } from './params-checked-transport.ts';
import { createMcpServer, offeredTools } from './server.ts';
import { StdioLines } from './stdio-lines.ts';

/**
 * `cairn mcp`: an MCP server on stdin/stdout for clients that launch a command, forwarding
 * every tool call to a Cairn server over its REST API. It offers the same tools as `/mcp` and
 * answers the same results; stdout carries only protocol messages, diagnostics go to stderr.
 */
export const runStdioMcp = async (options: ClientOptions): Promise<void> => {
  const client = new CairnClient(options);
  const ops = clientOperations(client);
  const scope = {
    ops,
    onBug: (error: unknown) => process.stderr.write(`cairn mcp: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`),
  };
  // One caller, the process that launched us: every call runs in the same scope.
  const server = createMcpServer(offeredTools(Object.keys(ops) as OperationName[]), () => scope);
  // Params the caller got wrong are answered -32602, as /mcp answers them, not -32603 by the SDK.
  const transport = new ParamsCheckedTransport(new StdioLines());
  // The client closing our stdin is the end of the session.
  process.stdin.once('end', () => void server.close().finally(() => process.exit(0)));
  await server.connect(transport);
  process.stderr.write(`cairn mcp: forwarding to ${options.url}${options.apiKey ? ' with CAIRN_API_KEY' : ' without an API key'}\n`);
};
