import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI_ARGS } from './cli-args.ts';


/** An official SDK client connected to `/mcp` of a running Cairn, sending `key` when given. */
export const connectHttp = async (baseUrl: string, key?: string, headers: Record<string, string> = {}): Promise<Client> => {
  const client = new Client({ name: 'cairn-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
    requestInit: { headers: { ...(key ? { 'x-cairn-api-key': key } : {}), ...headers } },
  });
  await client.connect(transport);
  return client;
};

/** An official SDK client that launches `cairn mcp` (stdio) forwarding to `baseUrl`. */
export const connectStdio = async (baseUrl: string, key?: string, stderr?: string[]): Promise<Client> => {
  const client = new Client({ name: 'cairn-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_ARGS, 'mcp'],
    env: { PATH: process.env.PATH ?? '', CAIRN_HTTP_URL: baseUrl, ...(key ? { CAIRN_API_KEY: key } : {}) },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => stderr?.push(chunk.toString()));
  await client.connect(transport);
  return client;
};

/**
 * `cairn mcp` (stdio) launched as connectStdio does, spoken to in raw JSON-RPC: `ask` sends one
 * request as given, which the SDK's client would refuse to send, and resolves with its answer.
 */
export const rawStdio = async (baseUrl: string, key?: string): Promise<{ ask: (request: { id: number | string; [field: string]: unknown }) => Promise<any>; close: () => Promise<void> }> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_ARGS, 'mcp'],
    env: { PATH: process.env.PATH ?? '', CAIRN_HTTP_URL: baseUrl, ...(key ? { CAIRN_API_KEY: key } : {}) },
    stderr: 'pipe',
  });
  const waiting = new Map<number | string, (answer: unknown) => void>();
  transport.onmessage = (message) => {
    if ('id' in message && message.id !== undefined) waiting.get(message.id)?.(message);
  };
  await transport.start();
  return {
    ask: (request) =>
      new Promise((resolve, reject) => {
        waiting.set(request.id, resolve);
        transport.send(request as never).catch(reject);
      }),
    close: () => transport.close(),
  };
};

export interface ToolAnswer {
  isError: boolean;
  /** The structured result (or, for a tool error, `{error: {...}}`). */
  body: any;
  /** The text a model reads. */
  text: string;
}

export const callTool = async (client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> => {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as Array<{ type: string; text?: string }>;
  const text = content.find((c) => c.type === 'text')?.text ?? '';
  return { isError: result.isError === true, body: result.structuredContent ?? JSON.parse(text), text };
};
