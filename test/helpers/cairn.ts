import pino from 'pino';
import { parseConfig } from '../../packages/server/src/config.ts';
import { createLogger } from '../../packages/server/src/http/logger.ts';
import { type RunningServer, startServer } from '../../packages/server/src/server.ts';

export interface Cairn {
  url: string;
  server: RunningServer;
  /** fetch against the server, JSON in and out, with the key when one is given. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * Start Cairn in this process on a free loopback port, logging nothing unless asked: pass
 * `logLines` to collect every log line (at debug) for assertions about logging, and
 * `withCortex` to embed a Cortex worker as `cairn serve --with-cortex` does.
 */
/** The key test servers encrypt connector signing secrets with (README, "Secrets at rest"). */
export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef';

export const startCairn = async (env: Record<string, string>, options: { logLines?: string[]; withCortex?: boolean } = {}): Promise<Cairn> => {
  const config = parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_SECRET_KEY: TEST_SECRET_KEY, ...env });
  const lines = options.logLines;
  const logger = lines
    ? createLogger('debug', { write: (line: string) => void lines.push(line) })
    : pino({ level: process.env.CAIRN_TEST_LOG ?? 'silent' });
  // No settle on close: that pause (SHUTDOWN_TIMINGS.settleMs) gives a load balancer time to
  // see the server not ready, and every server a test closes with a client connection open
  // would wait it out — a quarter of a second, a thousand times a run. The stop order itself
  // is shutdown.test.ts's subject, with timings of its own.
  const server = await startServer(config, logger, { settleMs: 0 }, { withCortex: options.withCortex === true });
  const call: Cairn['call'] = async (method, path, body, headers = {}) => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(server.url + path, init);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON (metrics, SSE): the raw text is the body.
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return { url: server.url, server, call, close: () => server.close() };
};
