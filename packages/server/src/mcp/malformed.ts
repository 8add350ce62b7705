import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS } from '../domain/limits.ts';

// No run-time import of the MCP SDK here: /mcp answers these refusals without loading it
// (http-route.ts loads the SDK on the first message it has to handle).

/** JSON-RPC's codes for text that is not JSON, JSON that is not a request, and params a method cannot take. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;

/** A JSON object: not null, not an array. */
export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The most one JSON-RPC message (a line on stdio, a POST body on /mcp) may hold: REST's body limit, on every transport. */
export const MAX_MESSAGE_BYTES = LIMITS.bodyBytes;

/** The refusal of a message over MAX_MESSAGE_BYTES, naming its size (`bytes`, or a floor of it when not read whole). */
export const tooLargeMessage = (bytes: number | undefined, whole = true): string =>
  `Invalid Request: the message is ${bytes === undefined ? 'larger than the limit' : `${whole ? '' : 'more than '}${bytes} bytes`}; a message is at most ${MAX_MESSAGE_BYTES} bytes (1 MiB): split a batch into smaller calls`;

/** An error answer; `id` null when the message gave none usable (the SDK's types require one). */
export const errorAnswer = (id: string | number | null, code: number, message: string): JSONRPCMessage =>
  ({ jsonrpc: '2.0', id, error: { code, message } }) as unknown as JSONRPCMessage;

/** The answer to a line or body that is not JSON at all: there is no id to answer with. */
export const parseErrorAnswer = (): JSONRPCMessage => errorAnswer(null, PARSE_ERROR, 'Parse error: the message is not JSON');

/**
 * The answer to a JSON value that is not a JSON-RPC message (the SDK's schema refused it), by
 * what is wrong with it, with the caller's id when it gave a usable one: a request whose params
 * are not an object is the caller's params (-32602, "params must be an object"); anything else
 * is not a request (-32600, naming the first thing wrong). Both transports answer these
 * instead of dropping them: the SDK's stdio transport reports such a line to no one, and the
 * client waits for an answer that never comes.
 */
export const malformedAnswer = (value: unknown): JSONRPCMessage => {
  const id = isObject(value) && (typeof value.id === 'string' || (typeof value.id === 'number' && Number.isFinite(value.id))) ? value.id : null;
  const answer = (code: number, message: string) => errorAnswer(id, code, message);
  if (!isObject(value)) return answer(INVALID_REQUEST, 'Invalid Request: a JSON-RPC message is a JSON object');
  if (value.jsonrpc !== '2.0') return answer(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"');
  if ('method' in value && typeof value.method !== 'string') return answer(INVALID_REQUEST, 'Invalid Request: "method" must be a string');
  if ('id' in value && id === null) return answer(INVALID_REQUEST, 'Invalid Request: "id" must be a string or a number');
  if (typeof value.method === 'string' && 'params' in value && !isObject(value.params)) {
    return answer(id === null ? INVALID_REQUEST : INVALID_PARAMS, `Invalid params: ${value.method} params must be an object`);
  }
  return answer(INVALID_REQUEST, 'Invalid Request: not a JSON-RPC request, notification or response');
};
