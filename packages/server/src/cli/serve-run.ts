import { ConfigError, type ConfigFlags, parseConfig } from '../config.ts';
import { redactCredentials } from '../domain/redact-credentials.ts';
import { SettingError } from '../domain/setting-error.ts';
import { createLogger } from '../http/logger.ts';
import { startServer } from '../server.ts';
import { unusablePlaceOf } from '../store/backends.ts';
import { sayFailure } from './command-exit.ts';

// What `cairn serve` runs, loaded by its action in cli.ts only when that command runs: the
// server's whole graph (fastify, the backends' drivers, MCP, search) is no cost to the others.

/** Past every step's own bound (server.ts), and under the 30 s a container gets before SIGKILL. */
const SHUTDOWN_DEADLINE_MS = 25_000;

/** `cairn serve`: run the HTTP API until SIGINT/SIGTERM, then shut down gracefully. */
export const runServe = async (flags: ConfigFlags & { withCortex?: boolean }): Promise<void> => {
  let config;
  try {
    config = parseConfig(process.env, flags);
    // A value no server can start with though it parses (a data directory that is a file):
    // said as a bad value is, before anything is opened.
    const unusable = await unusablePlaceOf(config.storage);
    if (unusable) throw new ConfigError(unusable);
  } catch (error) {
    if (error instanceof SettingError) process.exit(sayFailure(error));
    throw error;
  }
  const logger = createLogger(config.logLevel);
  let server;
  try {
    server = await startServer(config, logger, {}, { withCortex: flags.withCortex === true });
  } catch (error) {
    // A setting to change, whichever layer found it (an address that cannot be had, a data
    // directory this user cannot make or write, or one another process holds): one line, as above.
    if (error instanceof SettingError) {
      const code = sayFailure(error);
      logger.flush(() => process.exit(code));
      return;
    }
    // The logger's error serializer drops an invalid URL's `input` and masks URL passwords.
    logger.fatal({ err: error }, `cannot start: ${redactCredentials((error as Error).message)}`);
    logger.flush(() => process.exit(1));
    return;
  }
  let stopping = false;
  const exit = (code: number) => logger.flush(() => process.exit(code));
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal is someone who will not wait: acknowledged writes are already durable.
      logger.warn({ signal }, 'second signal: exiting without waiting');
      exit(1);
      return;
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // The last word when a step hangs past its own bound: still exit before a SIGKILL would.
    setTimeout(() => {
      logger.error({ ms: SHUTDOWN_DEADLINE_MS }, 'shutdown did not finish in time; exiting');
      exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    void server.close().then(
      () => exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
};
