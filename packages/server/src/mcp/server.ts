import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type RequestId, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { VERSION } from '../version.ts';
import { type CallScope, callTool } from './call-tool.ts';
import type { OperationName } from './operations.ts';
import type { ToolDefinition } from './tool.ts';
import { TOOLS } from './tools.ts';


/**
 * The scope of the call being handled. One server may serve many callers (`/mcp` keeps one
 * for every request): the transport hands each message's scope over in `authInfo.extra`.
 */
export type ScopeOf = (extra: { authInfo?: { extra?: Record<string, unknown> }; requestId?: RequestId }) => CallScope;

/** Drop what only costs a model tokens: the dialect URI and zod's "safe integer" bounds. */
const tidy = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$schema' || ((k === 'maximum' || k === 'minimum') && Math.abs(v as number) === Number.MAX_SAFE_INTEGER)) continue;
    out[k] = tidy(v);
  }
  return out;
};

// Converted once: tools/list is called on every connection, and on every request when stateless.
const LISTING = new Map<ToolDefinition, Tool>(
  TOOLS.map((tool) => [
    tool,
    {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tidy(z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' })) as Tool['inputSchema'],
      annotations: tool.annotations,
    },
  ]),
);

const instructions = (tools: readonly ToolDefinition[]): string =>
  [
    'Cairn is a shared, versioned memory written by several agents and by connected systems (GitHub, PagerDuty, Slack, Jira).',
    'Each entry is addressed by an entity_path, a slash-separated path naming what it is about from general to specific',
    '("repos/acme/api", "incidents/pagerduty/checkout", "agents/<your name>/notes"), and a key naming one fact about it ("pr-42", "owner").',
    'Every change makes a new version; confidence (0–1) says how far to trust an entry: 1 = system of record, lower = less certain.',
    'Entries written by "external/<source>" come from connectors.',
    `Tools here: ${tools.map((t) => t.name).join(', ')}.`,
  ].join(' ');

/** The tools a server whose callers have the operations in `offered` lists and serves. */
export const offeredTools = (offered: readonly OperationName[]): ToolDefinition[] => TOOLS.filter((tool) => offered.includes(tool.operation));

/**
 * An MCP server offering `tools` (those offeredTools picks for its callers); each call runs in the
 * scope `scopeOf` gives it. Built on the SDK's low-level Server rather than McpServer because
 * McpServer validates arguments against the listed schema with its own messages; here the
 * services validate, so REST and MCP refuse bad input alike.
 */
export const createMcpServer = (tools: readonly ToolDefinition[], scopeOf: ScopeOf): Server => {
  const server = new Server(
    { name: 'cairn', title: 'Cairn shared memory', version: VERSION },
    { capabilities: { tools: {} }, instructions: instructions(tools) },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((tool) => LISTING.get(tool) as Tool) }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(tools, request.params.name, request.params.arguments ?? {}, scopeOf(extra)));
  return server;
};
