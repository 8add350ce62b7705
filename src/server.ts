import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { buildApp } from './http/app.ts';
import type { Store } from './ports/store.ts';
import { openStore } from './store/open-store.ts';

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  /** The address actually bound (port 0 picks a free one). */
  url: string;
  close(): Promise<void>;
}

/** How long shutdown waits for in-flight requests before closing connections anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

/** Open the configured store, build the app and listen. The caller owns signals. */
export const startServer = async (config: Config, logger: Logger): Promise<RunningServer> => {
  const store = await openStore(config, logger);
  try {
    const { app } = await buildApp({ config, store, logger });
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    logger.info({ url, backend: store.backend }, 'cairn is listening');
    let closing: Promise<void> | null = null;
    const close = (): Promise<void> => {
      closing ??= (async () => {
        const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
        await app.close();
        clearTimeout(force);
        await store.close();
      })();
      return closing;
    };
    return { app, store, url, close };
  } catch (error) {
    await store.close();
    throw error;
  }
};
