import type { Command } from 'commander';
import { ConfigError, type Config, parseConfig } from '../config.ts';
import { cortexHealth } from '../cortex/health.ts';
import { startCortex } from '../cortex/start-cortex.ts';
import { redactCredentials } from '../domain/redact-credentials.ts';
import { createLogger } from '../http/logger.ts';
import { writeKnownLink } from '../services/write-known-link.ts';
import { capabilitiesOf, openBackend, sharedBackends } from '../store/backends.ts';

const notShared = (backend: string): string =>
  `cairn cortex: the ${backend} backend keeps its data inside the one server process that owns it, ` +
  'so the Cortex cannot run as a separate worker beside it. Run it embedded: `cairn serve --with-cortex`. ' +
  `For a separate worker, use a backend shared across replicas: ${sharedBackends().join(' or ')}.\n`;

/** The configuration, or exit `code` saying what is wrong with it. */
const configOrExit = (code: number): Readonly<Config> => {
  try {
    return parseConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`cairn: ${error.message}\n`);
    process.exit(code);
  }
};

/** `cairn cortex --health`: exit 0 only while the active worker's heartbeat is fresh and it is not failing for minutes. */
const health = async (config: Config): Promise<never> => {
  const apiKey = process.env.CAIRN_API_KEY || config.apiKeys[0];
  // Whatever fails, one line and exit 1: never a stack trace, which may repeat a secret.
  const verdict = await cortexHealth(config, Date.now, apiKey).catch((error: unknown) => ({
    ok: false,
    message: `cannot check the Cortex: ${redactCredentials(error instanceof Error ? error.message : String(error))}`,
  }));
  (verdict.ok ? process.stdout : process.stderr).write(`${verdict.message}\n`);
  process.exit(verdict.ok ? 0 : 1);
};

/** `cairn cortex`: the worker alone, standing by until it holds the lease, until SIGTERM/SIGINT. */
const run = async (config: Config): Promise<void> => {
  if (!capabilitiesOf(config.storage).sharedAcrossReplicas) {
    process.stderr.write(notShared(config.storage.backend));
    process.exit(2);
  }
  const logger = createLogger(config.logLevel);
  const exit = (code: number) => logger.flush(() => process.exit(code));
  let backend;
  try {
    backend = await openBackend(config.storage, logger);
  } catch (error) {
    logger.fatal({ err: error }, `cannot start: ${redactCredentials((error as Error).message)}`);
    exit(1);
    return;
  }
  const { store } = backend;
  const worker = await startCortex(config, backend, store, logger, (ns, known) => writeKnownLink({ store, now: Date.now }, ns, known));
  logger.info({ worker_id: worker.id, backend: backend.name }, 'cairn cortex is running');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return exit(1);
    stopping = true;
    logger.info({ signal }, 'cortex shutting down');
    setTimeout(() => exit(1), 15_000).unref();
    void worker.stop().then(() => store.close()).then(() => exit(0), (error: unknown) => {
      logger.error({ err: error }, 'cortex shutdown failed');
      exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
};

export const registerCortexCommand = (program: Command): void => {
  program
    .command('cortex')
    .description('run the Cortex worker alone, on a backend shared across replicas (otherwise: `cairn serve --with-cortex`)')
    .option('--health', 'exit 0 if the active Cortex worker\'s heartbeat is fresh and it has not been failing for more than 5 minutes, 1 otherwise')
    .action(async (options: { health?: boolean }) => {
      // A health check's 2 is reserved to Docker: a configuration it cannot read is unhealthy (1).
      const config = configOrExit(options.health ? 1 : 2);
      if (options.health) await health(config);
      else await run(config);
    });
};
