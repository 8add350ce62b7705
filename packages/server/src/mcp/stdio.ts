import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  type RequestId,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallScope } from './call-tool.ts';
import type { OperationName } from './operations.ts';
import { ParamsCheckedTransport } from './params-checked-transport.ts';
import { createMcpServer, offeredTools } from './server.ts';
import { StdioLines } from './stdio-lines.ts';

/** How long, once standard input has ended, the requests still in flight get to be answered. */
const DRAIN_MS = 30_000;

/** When a session's deferred work (StdioSession.begin) starts if no request has come by then. */
const BEGIN_WITHOUT_REQUEST_MS = 1000;

/**
 * A transport in front of another that keeps the ids of the requests received and not yet
 * answered (nor cancelled by the caller), so that the end of standard input can wait for them:
 * a client that writes its requests and closes the pipe (`printf … | cairn mcp`) still gets
 * every answer, and its writes are made.
 */
class InFlightTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private readonly inner: Transport;
  private readonly open = new Set<RequestId>();
  private idle: Array<() => void> = [];
  /** Told after each answer is written. */
  private readonly answered: () => void;

  constructor(inner: Transport, answered: () => void = () => {}) {
    this.inner = inner;
    this.answered = answered;
  }

  get unanswered(): number {
    return this.open.size;
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      if (isJSONRPCRequest(message)) this.open.add(message.id);
      // A cancelled request is not answered (MCP's cancellation).
      else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') this.settle((message.params as { requestId?: RequestId } | undefined)?.requestId);
      this.onmessage?.(message, extra);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    await this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    await this.inner.send(message, options);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      this.settle(message.id);
      this.answered();
    }
  }

  async close(): Promise<void> {
    await this.inner.close();
  }

  /** Resolves once every request received is answered, or after `ms`, whichever comes first. */
  drained(ms: number): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private settle(id: RequestId | undefined): void {
    if (id === undefined || !this.open.delete(id) || this.open.size > 0) return;
    for (const done of this.idle.splice(0)) done();
  }
}

/** Resolves once everything written to `out` so far has been handed to the system, or after `ms`. */
const flushed = (out: NodeJS.WriteStream, ms: number): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    // Writes are done in order: the callback of an empty one runs once those before it are.
    out.write('', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Where the calls of a `cairn mcp` process go: to a server over its REST API
 * (stdio-forward.ts), or to the services over a backend this process opened (stdio-local.ts).
 */
export interface StdioSession {
  /** The operations this session serves (the tools offered are theirs). */
  readonly operations: readonly OperationName[];
  /** The scope of one call; `requestId` is its JSON-RPC id. */
  scopeOf(requestId: RequestId | undefined): CallScope;
  /** One line for stderr once serving: where the calls go. */
  readonly banner: string;
  /** Ends the session once its calls are answered (closes the store this process opened). */
  close(): Promise<void>;
  /**
   * Work that would hold the first answers back (the built-in embedder's warm-up, a few tenths
   * of a second of the main thread): called once, when the first request is answered or
   * BEGIN_WITHOUT_REQUEST_MS after serving began, whichever comes first.
   */
  begin?(): void;
}

/**
 * `cairn mcp`: an MCP server on stdin/stdout for clients that launch a command, offering the
 * same tools as `/mcp` with the same answers; stdout carries only protocol messages,
 * diagnostics go to stderr. It ends when standard input does (once the calls in flight are
 * answered) or at SIGINT/SIGTERM, closing the session either way.
 */
export const serveStdioMcp = async (session: StdioSession): Promise<void> => {
  const server = createMcpServer(offeredTools(session.operations), (extra) => session.scopeOf(extra.requestId));
  // Params the caller got wrong are answered -32602, as /mcp answers them, not -32603 by the SDK.
  const lines = new StdioLines();
  // A client waits for its initialize to be answered before anything else: the session's
  // deferred work starts once the first answer is on its way (or a while after serving began).
  let begun = false;
  const begin = (): void => {
    if (begun) return;
    begun = true;
    clearTimeout(beginAnyway);
    session.begin?.();
  };
  const beginAnyway = setTimeout(begin, BEGIN_WITHOUT_REQUEST_MS).unref();
  const transport = new InFlightTransport(new ParamsCheckedTransport(lines), begin);
  let ending: Promise<void> | null = null;
  const end = (wait: boolean): Promise<void> => {
    ending ??= (async () => {
      // The client closing our stdin is the end of the session, once the requests it sent are
      // answered (within DRAIN_MS): ending at once dropped calls still on their way.
      if (wait) await transport.drained(DRAIN_MS);
      const left = transport.unanswered;
      if (wait && left > 0) {
        process.stderr.write(`cairn mcp: standard input ended; ${left} request(s) still unanswered after ${DRAIN_MS / 1000} s, exiting without them\n`);
        process.exitCode = 1;
      }
      await server.close().catch(() => {});
      await session.close().catch((error: unknown) => {
        process.stderr.write(`cairn mcp: closing failed: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exitCode = 1;
      });
      // The answers written last may still be on their way to a reader slower than us: exiting
      // now dropped them, or cut the last one short.
      await flushed(process.stdout, wait ? DRAIN_MS : 2_000);
    })().finally(() => process.exit());
    return ending;
  };
  // Told by the transport once it has handled the last line (one without a newline too), so
  // that the request on it is among those waited for.
  lines.onend = () => void end(true);
  // A signal is someone who will not wait for the calls in flight; what was acknowledged is durable.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void end(false));
  await server.connect(transport);
  process.stderr.write(`cairn mcp: ${session.banner}\n`);
};
