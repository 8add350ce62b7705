import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, type RequestId, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { INVALID_REQUEST, MAX_MESSAGE_BYTES, errorAnswer, parseErrorAnswer, tooLargeMessage } from './malformed.ts';
import { BATCH_ANSWER_CHARS, answerChars, batchFullMessage, sortMessages } from './messages.ts';

/**
 * A line longer than this is not even read whole: answered once, with no id, and skipped (as
 * the SDK's stdio transport bounds its buffer). Up to it, a line over MAX_MESSAGE_BYTES is read
 * to answer its refusal with the caller's id.
 */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** The answers of one batch line, written as one array once each of its requests is answered. */
interface BatchAnswer {
  slots: Array<JSONRPCMessage | undefined>;
  left: number;
  /** Its tool calls not handed on yet: one runs at a time, as on /mcp (http-dispatch.ts). */
  calls: JSONRPCMessage[];
  /** The tool call handed on and not answered yet. */
  running: RequestId | null;
  /** Characters of answer text its tool calls have made (BATCH_ANSWER_CHARS). */
  spent: number;
}

/**
 * MCP's stdio transport: one JSON-RPC message per line on stdin, answers on stdout. Unlike the
 * SDK's own (StdioServerTransport), a line that is not a message is answered — -32700 when it
 * is not JSON, -32600 or -32602 by what is wrong with it (malformed.ts) — rather than only
 * reported to `onerror`, which left the client waiting forever for its answer; an overlong
 * line is answered and skipped rather than ending the session; a message over 1 MiB is refused
 * as /mcp refuses it (messages.ts); a batch (a JSON array) is taken as /mcp takes it and
 * answered with one array; and a last line with no newline is read when stdin ends.
 */
export class StdioLines implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set while the rest of an overlong line is skipped. */
  private skipping = false;
  /** Requests of batch lines not answered yet, by id: where each answer goes in its batch's array. */
  private readonly batched = new Map<RequestId, Array<{ batch: BatchAnswer; slot: number }>>();
  /** While stdout is full: resolves at its next `drain`, shared by every answer waiting for it. */
  private drained: Promise<void> | null = null;
  /** Called once stdin has ended and its last line, newline or not, is handled. */
  onend?: () => void;

  private readonly input: NodeJS.ReadableStream;
  private readonly output: NodeJS.WritableStream;

  constructor(input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout) {
    this.input = input;
    this.output = output;
  }

  private readonly onData = (chunk: Buffer): void => {
    let from = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, from)) {
      this.take(chunk.subarray(from, end));
      this.finishLine();
      from = end + 1;
    }
    this.take(chunk.subarray(from));
  };

  private readonly onError = (error: Error): void => this.onerror?.(error);

  /** `printf '…' | cairn mcp`: a last line without its newline is a message all the same. */
  private readonly onEnd = (): void => {
    if (this.pendingBytes > 0 || this.skipping) this.finishLine();
    this.onend?.();
  };

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
    this.input.once('end', this.onEnd);
  }

  /** Part of the current line; past MAX_LINE_BYTES it is answered once and the rest skipped. */
  private take(part: Buffer): void {
    if (this.skipping || part.length === 0) return;
    this.pending.push(part);
    this.pendingBytes += part.length;
    if (this.pendingBytes > MAX_LINE_BYTES) {
      this.pending = [];
      this.pendingBytes = 0;
      this.skipping = true;
      void this.answer(errorAnswer(null, INVALID_REQUEST, tooLargeMessage(MAX_LINE_BYTES, false)));
    }
  }

  private finishLine(): void {
    const bytes = this.pendingBytes;
    const line = Buffer.concat(this.pending).toString('utf8').replace(/\r$/, '');
    this.pending = [];
    this.pendingBytes = 0;
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      void this.answer(parseErrorAnswer());
      return;
    }
    if (bytes > MAX_MESSAGE_BYTES) {
      const id = typeof value === 'object' && value !== null && 'id' in value && (typeof value.id === 'string' || typeof value.id === 'number') ? value.id : null;
      void this.answer(errorAnswer(id, INVALID_REQUEST, tooLargeMessage(bytes)));
      return;
    }
    const sorted = sortMessages(value);
    if (typeof sorted === 'string') {
      void this.answer(errorAnswer(null, INVALID_REQUEST, sorted));
      return;
    }
    if (!sorted.batch) {
      if (sorted.messages[0]) this.onmessage?.(sorted.messages[0]);
      else if (sorted.malformed[0]) void this.answer(sorted.malformed[0]);
      return;
    }
    // A batch: its answers are collected in send() and written as one array, in its order.
    const requests = sorted.messages.filter(isJSONRPCRequest);
    const isCall = (m: JSONRPCMessage): boolean => isJSONRPCRequest(m) && m.method === 'tools/call';
    const batch: BatchAnswer = { slots: [...sorted.malformed, ...requests.map(() => undefined)], left: requests.length, calls: sorted.messages.filter(isCall), running: null, spent: 0 };
    requests.forEach((request, i) => {
      const waiting = this.batched.get(request.id) ?? [];
      waiting.push({ batch, slot: sorted.malformed.length + i });
      this.batched.set(request.id, waiting);
    });
    if (batch.left === 0 && batch.slots.length > 0) void this.answer(batch.slots as JSONRPCMessage[]);
    for (const message of sorted.messages) if (!isCall(message)) this.onmessage?.(message);
    this.nextCall(batch);
  }

  /**
   * Hands on the batch's next tool call once the one before it has answered, or, once their
   * answers hold BATCH_ANSWER_CHARS, answers the rest unrun: all at once, a hundred calls each
   * answering a full page held gigabytes and made a line no string could hold.
   */
  private nextCall(batch: BatchAnswer): void {
    const call = batch.calls.shift() as (JSONRPCMessage & { id: RequestId }) | undefined;
    if (!call) return;
    if (batch.spent >= BATCH_ANSWER_CHARS) {
      void this.send(errorAnswer(call.id, -32000, batchFullMessage()));
      return this.nextCall(batch);
    }
    batch.running = call.id;
    this.onmessage?.(call);
  }

  private async answer(message: JSONRPCMessage | JSONRPCMessage[]): Promise<void> {
    await this.write(message).catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
  }

  send(message: JSONRPCMessage): Promise<void> {
    const waiting = 'id' in message && message.id !== undefined ? this.batched.get(message.id) : undefined;
    const place = waiting?.shift();
    if (!place) return this.write(message);
    if (waiting?.length === 0) this.batched.delete((message as { id: RequestId }).id);
    place.batch.slots[place.slot] = message;
    place.batch.left -= 1;
    if (place.batch.running !== null && place.batch.running === (message as { id: RequestId }).id) {
      place.batch.running = null;
      place.batch.spent += answerChars(message);
      this.nextCall(place.batch);
    }
    return place.batch.left === 0 ? this.write(place.batch.slots as JSONRPCMessage[]) : Promise.resolve();
  }

  /** One line out; when stdout is full, resolves at its next drain (one listener for every waiting answer). */
  private write(message: JSONRPCMessage | JSONRPCMessage[]): Promise<void> {
    if (this.output.write(`${JSON.stringify(message)}\n`) && !this.drained) return Promise.resolve();
    this.drained ??= new Promise((resolve) =>
      this.output.once('drain', () => {
        this.drained = null;
        resolve();
      }),
    );
    return this.drained;
  }

  async close(): Promise<void> {
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    this.input.off('end', this.onEnd);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.pending = [];
    this.onclose?.();
  }
}
