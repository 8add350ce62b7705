import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS } from '../domain/limits.ts';
import { malformedAnswer } from './malformed.ts';

/** As the SDK's Streamable HTTP transport bounds a batch. */
export const MAX_BATCH = 100;

/**
 * The most text a batch's tool answers may hold together before its remaining calls are
 * refused unrun: one REST page's worth (LIMITS.pageJsonChars). Without it, 100 calls each
 * answering a full page made one reply of gigabytes, past the longest string V8 builds.
 */
export const BATCH_ANSWER_CHARS = LIMITS.pageJsonChars;

/** A batch's call refused because the answers before it reached BATCH_ANSWER_CHARS. */
export const batchFullMessage = (): string =>
  `not run: the answers before this call in its batch already hold ${BATCH_ANSWER_CHARS / (1024 * 1024)} MiB of text, the most one batch answers; send this call in another request`;

/** The text a tool's answer carries (its content's text parts; its structured content is the same JSON). */
export const answerChars = (answer: JSONRPCMessage): number => {
  const content = 'result' in answer ? (answer.result as { content?: Array<{ text?: unknown }> }).content : undefined;
  let chars = 0;
  for (const part of Array.isArray(content) ? content : []) if (typeof part.text === 'string') chars += part.text.length;
  return chars;
};

/** One body or line sorted: the messages to handle, and the answers to what is not a message. */
export interface SortedMessages {
  /** A JSON-RPC batch (an array), answered with an array whatever it holds (JSON-RPC 2.0 §6). */
  batch: boolean;
  messages: JSONRPCMessage[];
  /** In the order met, an answer to each element that is not a JSON-RPC message (malformed.ts). */
  malformed: JSONRPCMessage[];
}

/**
 * A parsed body (/mcp) or line (stdio) as the messages it holds: one, or a batch of up to
 * MAX_BATCH, each element that is not a message answered by what is wrong with it. A refusal
 * (a string, the error's message) for an empty or overlong batch. Both transports take batches
 * whatever protocol version was negotiated, the same way.
 */
export const sortMessages = (value: unknown): SortedMessages | string => {
  const batch = Array.isArray(value);
  if (batch && value.length > MAX_BATCH) return `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`;
  const raw: unknown[] = batch ? value : [value];
  if (raw.length === 0) return 'Invalid Request: an empty batch';
  const messages: JSONRPCMessage[] = [];
  const malformed: JSONRPCMessage[] = [];
  for (const m of raw) {
    const parsed = JSONRPCMessageSchema.safeParse(m);
    if (parsed.success) messages.push(parsed.data);
    else malformed.push(malformedAnswer(m));
  }
  return { batch, messages, malformed };
};
