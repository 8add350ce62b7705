import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
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
 * An official SDK client that launches `cairn mcp` with no server address, so that the
 * process opens the backend `env` names and serves it itself; `args` follow `mcp`.
 */
export const connectLocalStdio = async (env: Record<string, string>, args: readonly string[] = [], stderr?: string[]): Promise<Client> => {
  const client = new Client({ name: 'cairn-test', version: '1.0.0' });
  const aws = Object.fromEntries(Object.entries(process.env).filter(([name, value]) => name.startsWith('AWS_') && value !== undefined)) as Record<string, string>;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_ARGS, 'mcp', ...args],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...aws, CAIRN_LOG_LEVEL: 'warn', ...env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => stderr?.push(chunk.toString()));
  await client.connect(transport);
  return client;
};

/**
 * `cairn mcp` (stdio) launched as connectStdio does, spoken to in raw JSON-RPC: `ask` sends one
 * request as given, which the SDK's client would refuse to send, and resolves with its answer;
 * `askLine` sends one line as it is (not JSON, say) and resolves with the next answer that no
 * `ask` waits for. Raw pipes, not the SDK's client transport, which drops what its schema refuses.
 */
export const rawStdio = async (
  baseUrl: string,
  key?: string,
): Promise<{ ask: (request: { id: number | string; [field: string]: unknown }) => Promise<any>; askLine: (line: string) => Promise<any>; close: () => Promise<void> }> => {
  const child = spawn(process.execPath, [...CLI_ARGS, 'mcp'], {
    env: { PATH: process.env.PATH ?? '', CAIRN_HTTP_URL: baseUrl, ...(key ? { CAIRN_API_KEY: key } : {}) },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const byId = new Map<number | string, (answer: unknown) => void>();
  const inOrder: Array<(answer: unknown) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as { id?: number | string | null };
    const waiter = message.id !== undefined && message.id !== null ? byId.get(message.id) : undefined;
    if (waiter) byId.delete(message.id as number | string);
    (waiter ?? inOrder.shift())?.(message);
  });
  const write = (line: string) => child.stdin.write(`${line}\n`);
  return {
    ask: (request) =>
      new Promise((resolve) => {
        byId.set(request.id, resolve);
        write(JSON.stringify(request));
      }),
    askLine: (line) =>
      new Promise((resolve) => {
        inOrder.push(resolve);
        write(line);
      }),
    close: async () => {
      child.stdin.end();
      if (child.exitCode === null) await once(child, 'exit');
    },
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
