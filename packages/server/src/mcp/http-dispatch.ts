import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode, type JSONRPCMessage, type JSONRPCRequest, McpError, SUPPORTED_PROTOCOL_VERSIONS, isInitializeRequest, isJSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { type CallScope, callTool } from './call-tool.ts';
import { refuseInvalidParams } from './invalid-params.ts';
import { INVALID_REQUEST } from './malformed.ts';
import { BATCH_ANSWER_CHARS, answerChars, batchFullMessage, sortMessages } from './messages.ts';
import type { ToolDefinition } from './tool.ts';

/** What an HTTP POST to `/mcp` is answered: a status and a JSON body (none for 202). */
export interface McpAnswer {
  status: number;
  body: unknown;
}

const refusal = (status: number, code: number, message: string): McpAnswer => ({ status, body: { jsonrpc: '2.0', error: { code, message }, id: null } });

const isCancellation = (message: JSONRPCMessage): boolean => 'method' in message && message.method === 'notifications/cancelled';

/**
 * The SDK's test, after a look at the method: for any other message its schema parse fails,
 * and a failed zod parse builds its issues (about 10 µs of every tool call).
 */
const isInitialize = (message: JSONRPCMessage): boolean => 'method' in message && message.method === 'initialize' && isInitializeRequest(message);

const hasId = (message: JSONRPCMessage): message is JSONRPCMessage & { id: string | number } => 'id' in message && message.id !== undefined;

/** A thrown error as the SDK's protocol layer answers it. */
const rpcError = (error: unknown): { code: number; message: string; data?: unknown } =>
  error instanceof McpError
    ? { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) }
    : { code: ErrorCode.InternalError, message: 'Internal error' };

/**
 * Stateless MCP over HTTP with one long-lived server. The SDK's Streamable HTTP transport
 * expects a new server and transport for each stateless request (about 2 ms of set-up, more
 * than the tool call itself); here one server is connected once to this in-process transport,
 * and each POST's messages go through it with the caller's scope.
 *
 * Concurrent callers may all use the same JSON-RPC ids, so each request is given an id of
 * the dispatcher's own on the way in, and its own back on the way out. The HTTP checks are
 * the SDK transport's, in the same order and with the same answers (406, 415, 400).
 *
 * A tools/call, nearly every request an agent makes, does not go through the server: the
 * dispatcher calls the tool itself, as the server's handler would (call-tool.ts). Through the
 * server, its protocol layer parses the request twice more and the result once against the
 * SDK's schemas, and keeps an abort controller per request: about 60 µs of a read that costs
 * Cairn 150 µs through REST (CPU profile, /mcp reads one at a time). Everything else (initialize,
 * tools/list, ping, notifications) still goes through the server.
 */
export class McpDispatcher implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private nextId = 0;
  private readonly waiting = new Map<number, { id: string | number; answer: (message: JSONRPCMessage) => void }>();

  private readonly tools: readonly ToolDefinition[];

  private constructor(tools: readonly ToolDefinition[]) {
    this.tools = tools;
  }

  /** A dispatcher with `server` connected to it, calling `tools` (the ones the server lists). */
  static async connect(server: Server, tools: readonly ToolDefinition[]): Promise<McpDispatcher> {
    const dispatcher = new McpDispatcher(tools);
    await server.connect(dispatcher);
    return dispatcher;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** The server's answers and notifications: answers go back to the request that asked. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!hasId(message) || typeof message.id !== 'number') return;
    const waiter = this.waiting.get(message.id);
    if (!waiter) return;
    this.waiting.delete(message.id);
    waiter.answer({ ...message, id: waiter.id } as JSONRPCMessage);
  }

  /** One POST: its headers and parsed body, answered when every request in it is. */
  async handle(headers: Record<string, string | string[] | undefined>, body: unknown, scope: CallScope): Promise<McpAnswer> {
    const accept = String(headers.accept ?? '');
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return refusal(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    const type = String(headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') return refusal(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    // A message that is not one is answered by what is wrong with it (malformed.ts), beside the
    // batch's others; a POST of nothing else is a 400. Stdio sorts its lines the same way.
    const sorted = sortMessages(body);
    if (typeof sorted === 'string') return refusal(400, INVALID_REQUEST, sorted);
    const { batch, messages, malformed } = sorted;
    // A batch is answered with an array, whatever it holds (JSON-RPC 2.0 §6); one message, with it.
    const reply = <T>(answers: T[]): T | T[] => (batch ? answers : (answers[0] as T));
    if (messages.length === 0) return { status: 400, body: reply(malformed) };
    if (messages.some(isInitialize)) {
      if (messages.length > 1) return refusal(400, INVALID_REQUEST, 'Invalid Request: Only one initialization request is allowed');
    } else {
      const version = headers['mcp-protocol-version'];
      if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return refusal(400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
      }
    }
    const extra = { authInfo: { token: '', clientId: '', scopes: [], extra: { scope } } };
    const answers: Array<Promise<JSONRPCMessage>> = malformed.map((answer) => Promise.resolve(answer));
    // A batch's tool calls run one after another, each once the one before it has answered,
    // until their answers hold BATCH_ANSWER_CHARS: run at once, a hundred calls each answering
    // a full page held gigabytes together and made a reply no string could hold (a 500).
    let toolTurn: Promise<unknown> = Promise.resolve();
    const spent = { chars: 0 };
    for (const message of messages) {
      if (!isJSONRPCRequest(message)) {
        // Cancellation is not passed on. It names a request by id, and the ids the server sees
        // are the dispatcher's, shared by every caller: a cancel could stop another caller's
        // call. And a cancelled request gets no answer from the server, which would leave its
        // POST unanswered. A stateless request runs to its end; a client that gives up closes it.
        if (isCancellation(message)) continue;
        this.onmessage?.(message, extra);
        continue;
      }
      const refused = refuseInvalidParams(message);
      if (refused) {
        answers.push(Promise.resolve(refused));
        continue;
      }
      if (message.method === 'tools/call') {
        const call = batch ? toolTurn.then(() => this.answerWithin(message, scope, spent)) : this.answerToolCall(message, scope);
        toolTurn = call;
        answers.push(call);
        continue;
      }
      const id = ++this.nextId;
      answers.push(new Promise((answer) => this.waiting.set(id, { id: message.id, answer })));
      this.onmessage?.({ ...message, id }, extra);
    }
    if (answers.length === 0) return { status: 202, body: null };
    const replies = await Promise.all(answers);
    return { status: 200, body: reply(replies) };
  }

  /** A batch's tool call, unless the answers before it have spent the batch's budget (`spent`, in characters of answer text). */
  private async answerWithin(message: JSONRPCRequest, scope: CallScope, spent: { chars: number }): Promise<JSONRPCMessage> {
    if (spent.chars >= BATCH_ANSWER_CHARS) return { jsonrpc: '2.0', id: message.id, error: { code: -32000, message: batchFullMessage() } };
    const answer = await this.answerToolCall(message, scope);
    spent.chars += answerChars(answer);
    return answer;
  }

  /** A tools/call that refuseInvalidParams let through, answered with the caller's own id. */
  private async answerToolCall(message: JSONRPCRequest, scope: CallScope): Promise<JSONRPCMessage> {
    const { name, arguments: args } = message.params as { name: string; arguments?: Record<string, unknown> };
    try {
      return { jsonrpc: '2.0', id: message.id, result: await callTool(this.tools, name, args ?? {}, scope) };
    } catch (error) {
      // callTool reports its own bugs before it throws; anything else thrown is one too.
      if (!(error instanceof McpError)) scope.onBug(error);
      return { jsonrpc: '2.0', id: message.id, error: rpcError(error) };
    }
  }
}
