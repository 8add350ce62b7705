import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { INVALID_REQUEST, errorAnswer, malformedAnswer, parseErrorAnswer } from './malformed.ts';

/** A line longer than this is answered as malformed and dropped, as the SDK's stdio transport bounds its buffer. */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/**
 * MCP's stdio transport: one JSON-RPC message per line on stdin, answers on stdout. Unlike the
 * SDK's own (StdioServerTransport), a line that is not a message is answered — -32700 when it
 * is not JSON, -32600 or -32602 by what is wrong with it (malformed.ts) — rather than only
 * reported to `onerror`, which left the client waiting forever for its answer; and an
 * overlong line is answered and skipped rather than ending the session.
 */
export class StdioLines implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set while the rest of an overlong line is skipped. */
  private skipping = false;

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

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
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
      void this.answer(errorAnswer(null, INVALID_REQUEST, `Invalid Request: a message longer than ${MAX_LINE_BYTES} bytes`));
    }
  }

  private finishLine(): void {
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
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (parsed.success) this.onmessage?.(parsed.data);
    else void this.answer(malformedAnswer(value));
  }

  private async answer(message: JSONRPCMessage): Promise<void> {
    await this.send(message).catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.pending = [];
    this.onclose?.();
  }
}
