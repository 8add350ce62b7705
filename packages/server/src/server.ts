import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Config, ConfigError } from './config.ts';
import type { CortexWorker } from './cortex/worker.ts';
import { testableMs } from './domain/test-timing.ts';
import { buildApp } from './http/app.ts';
import type { Store } from './ports/store.ts';
import { noteConnection } from './event-loop.ts';
import { type Runtime, createRuntime } from './runtime.ts';
import { MemorySearchIndex } from './search/memory-index.ts';
import { warmEntries, warmSearch } from './services/warm-search.ts';

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  /** The address actually bound (port 0 picks a free one). */
  url: string;
  /** Graceful stop (see startServer); resolves when the store is closed. Idempotent. */
  close(): Promise<void>;
  /** The embedded Cortex worker (`withCortex`), else null. */
  cortex: CortexWorker | null;
  /** Everything the server is made of. */
  runtime: Runtime;
  /** Starts the embedder's warm-up now, if it has not started (see ServerOptions.deferWarmUp). */
  warmUp(): void;
}

/**
 * How long each step of a graceful stop may take. The defaults add up to about 20 s, inside
 * the 30 s that Kubernetes and the compose file give a container between SIGTERM and SIGKILL.
 */
export interface ShutdownTimings {
  /** Still listening, every response saying `Connection: close`: requests already on their
   * way over kept-alive connections arrive and are served instead of meeting a reset. */
  settleMs: number;
  /** In-flight requests get this long to finish before their connections are cut. */
  graceMs: number;
  /** Closing the store (final fsync, checkpoint, lock release, pool end) gets this long. */
  storeCloseMs: number;
}

export interface ServerOptions {
  /** Run a Cortex worker in this process (`cairn serve --with-cortex`). */
  withCortex?: boolean;
  /**
   * Leave the embedder's warm-up, which holds the main thread for a few tenths of a second, to
   * `warmUp()`: `cairn mcp` answers its client's first requests (initialize, the tool list)
   * before it.
   */
  deferWarmUp?: boolean;
}

export const SHUTDOWN_TIMINGS: Readonly<ShutdownTimings> = Object.freeze({ settleMs: 250, graceMs: 10_000, storeCloseMs: 10_000 });

/**
 * The search warm-up over an index of its own (services/warm-search.ts). A remote embedder is
 * not called for it: with one, only the text ranking and the lexicon's part are warmed.
 */
const warmUp = async (runtime: Runtime, stopped: () => boolean): Promise<void> => {
  const started = performance.now();
  const embedder = runtime.search.embedder.local ? runtime.search.embedder : null;
  const index = MemorySearchIndex.over(warmEntries(runtime.deps.now()), embedder, runtime.logger);
  try {
    const { searches, answered } = await warmSearch({ ...runtime.deps, embedder }, index, stopped);
    runtime.logger.debug({ searches, answered, ms: Math.round(performance.now() - started) }, 'search warmed up');
  } catch (error) {
    if (!stopped()) runtime.logger.warn({ err: error }, 'the search warm-up failed; the first searches only take longer');
  } finally {
    await index.close();
  }
};

/**
 * A listen that failed over the configured address, as a ConfigError naming the setting
 * (`cairn serve` says it in one line, exit 2, as any bad value); null for any other failure.
 */
const listenRefusal = (error: unknown, config: Config): ConfigError | null => {
  const address = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new ConfigError(`cannot listen on ${address}: the port is already in use (CAIRN_PORT / --port)`);
    case 'EACCES':
      return new ConfigError(`cannot listen on ${address}: permission denied; ports below 1024 need privileges (CAIRN_PORT / --port)`);
    case 'EADDRNOTAVAIL':
      return new ConfigError(`cannot listen on ${config.host}: no network interface of this machine has that address (CAIRN_HOST / --host)`);
    default:
      return null;
  }
};

/** Idle kept-alive sockets (an SSE stream just ended, a response just finished) are cut this often while draining. */
const REAP_EVERY_MS = 100;

/**
 * Build the runtime (runtime.ts: the backend, search, an embedded Cortex …) and the app, and
 * listen. The caller owns signals; `close()` stops in this order, each step bounded: stop being ready and end keep-alive, stop
 * listening and end event streams, let in-flight requests finish (then cut what is left),
 * and close the store last, so every request that was answered had its write persisted.
 * An embedded Cortex (`serve --with-cortex`) belongs between the HTTP drain and the store,
 * so that its lock is released while the backend is still there.
 */
export const startServer = async (config: Config, logger: Logger, timings: Partial<ShutdownTimings> = {}, options: ServerOptions = {}): Promise<RunningServer> => {
  // CAIRN_TEST_SETTLE_MS shortens the settle for tests alone: the suites stop their spawned
  // servers with a client connection open, and each would sit it out.
  const { settleMs, graceMs, storeCloseMs } = { ...SHUTDOWN_TIMINGS, settleMs: testableMs('CAIRN_TEST_SETTLE_MS', SHUTDOWN_TIMINGS.settleMs), ...timings };
  const runtime = await createRuntime(config, logger, { withCortex: options.withCortex === true });
  try {
    const { app, drain } = await buildApp(runtime);
    // Background work yields more turns while connections arrive (event-loop.ts).
    app.server.on('connection', noteConnection);
    await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenRefusal(error, config) ?? error;
    });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    logger.info({ url, backend: runtime.backend.name }, 'cairn is listening');
    // The built-in embedder's word table takes about 0.1 s to read: read it now, not inside
    // the first write or search; then run the search code a few times (warm-search.ts). Once
    // the lines logged so far are written: the table's read holds the main thread (a second
    // and more on a loaded host), and "cairn is listening", queued behind the line before it,
    // would reach a supervisor or a script waiting for it only after that.
    let closed = false;
    let warming = false;
    const startWarmUp = (): void => {
      if (warming || closed) return;
      warming = true;
      logger.flush(() =>
        setImmediate(() => {
          logger.debug('search warm-up started');
          try {
            runtime.search.embedder.warm?.();
          } catch (error) {
            logger.warn({ err: error }, 'loading the embedder ahead of use failed; the first embedding tries again');
          }
          void warmUp(runtime, () => closed);
        }),
      );
    };
    if (!options.deferWarmUp) startWarmUp();

    const stopHttp = async (): Promise<void> => {
      drain.begin();
      const inFlight = drain.inFlightCount;
      const connections = await new Promise<number>((resolve) => app.server.getConnections((_error, count) => resolve(count ?? 0)));
      if (connections > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
      const reaper = setInterval(() => app.server.closeIdleConnections(), REAP_EVERY_MS).unref();
      const force = setTimeout(() => {
        logger.warn({ in_flight: drain.inFlightCount, grace_ms: graceMs }, 'requests still running after the grace period; closing their connections');
        app.server.closeAllConnections();
      }, graceMs).unref();
      try {
        // Stops listening, cuts idle sockets, ends SSE streams (preClose), waits for the rest.
        await app.close();
      } finally {
        clearInterval(reaper);
        clearTimeout(force);
      }
      logger.info({ in_flight_at_signal: inFlight, connections_at_signal: connections }, 'http server closed');
    };

    let closing: Promise<void> | null = null;
    const close = (): Promise<void> => {
      closed = true;
      closing ??= (async () => {
        const started = Date.now();
        try {
          await stopHttp();
        } finally {
          // Even when the HTTP side failed to stop cleanly, the rest gets its orderly close:
          // the embedded Cortex, search and counters, and the store last.
          await runtime.close(storeCloseMs);
        }
        logger.info({ ms: Date.now() - started }, 'stopped');
      })();
      return closing;
    };
    return { app, store: runtime.store, url, close, cortex: runtime.cortex, runtime, warmUp: startWarmUp };
  } catch (error) {
    await runtime.close();
    throw error;
  }
};
