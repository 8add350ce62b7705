import type { z } from 'zod';
import { InitializeRequestSchema, type JSONRPCMessage, type JSONRPCRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { INVALID_PARAMS, isObject } from './malformed.ts';

/**
 * Why a tools/call cannot be a call, or null. The SDK would refuse these too, but as an
 * internal error (-32603) carrying its schema library's message: the caller's mistake is
 * named here as one (-32602), as the JSON-RPC spec asks.
 */
const invalidToolCall = (message: JSONRPCRequest): string | null => {
  if (message.method !== 'tools/call') return null;
  const params = (message as { params?: unknown }).params;
  if (!isObject(params)) return 'Invalid params: tools/call needs a params object';
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') return 'Invalid params: "name" must be the tool\'s name';
  if (args !== undefined && !isObject(args)) return 'Invalid params: "arguments" must be an object';
  return null;
};

/**
 * The requests with params the SDK's server answers (its own initialize; tools/list,
 * server.ts), by method, with the schema it checks them against: a request that fails it
 * would be answered -32603 carrying the schema library's whole report. (A ping's only params,
 * `_meta`, are checked with the message itself.)
 */
const SERVER_REQUESTS = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema],
  ['tools/list', ListToolsRequestSchema],
]);

/**
 * Why a request for the SDK's server has params it would refuse, or null: as for tools/call,
 * named as the caller's mistake (-32602), by the first thing wrong
 * (`Invalid params: initialize params.protocolVersion: …`).
 */
const invalidServerRequest = (message: JSONRPCRequest): string | null => {
  const parsed = SERVER_REQUESTS.get(message.method)?.safeParse(message);
  if (!parsed || parsed.success) return null;
  const issue = parsed.error.issues[0];
  return `Invalid params: ${message.method} ${issue ? `${issue.path.map(String).join('.')}: ${issue.message}` : 'params are not what it takes'}`;
};

/**
 * The answer to `message` when its params are the caller's mistake, with the caller's own id;
 * null when they are not. Both transports (/mcp's dispatcher and `cairn mcp` over stdio) answer
 * these before the SDK's server sees them, so a bad initialize, tools/list or tools/call gets
 * the same short -32602 whichever way it came.
 */
export const refuseInvalidParams = (message: JSONRPCRequest): JSONRPCMessage | null => {
  const reason = invalidToolCall(message) ?? invalidServerRequest(message);
  return reason === null ? null : ({ jsonrpc: '2.0', id: message.id, error: { code: INVALID_PARAMS, message: reason } } as JSONRPCMessage);
};
