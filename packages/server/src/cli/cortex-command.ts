import type { Command } from 'commander';
import { ConfigError, type Config, parseConfig } from '../config.ts';
import { cortexHealth } from '../cortex/health.ts';
import { startCortex } from '../cortex/start-cortex.ts';
import { createLogger } from '../http/logger.ts';
import { openStore } from '../store/open-store.ts';

const FILESYSTEM_REFUSAL =
  'cairn cortex: the filesystem backend keeps its data inside the one server process that owns the data directory, ' +
  'so the Cortex cannot run as a separate worker beside it. Run it embedded: `cairn serve --with-cortex`. ' +
  'For a separate worker, use PostgreSQL (CAIRN_DB_DSN) or S3 (CAIRN_OBJECT_BUCKET).\n';

const configOrExit = (): Readonly<Config> => {
  try {
    return parseConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`cairn: ${error.message}\n`);
    process.exit(2);
  }
};

/** `cairn cortex --health`: exit 0 only while the active worker's heartbeat is fresh. */
const health = async (config: Config): Promise<never> => {
  const apiKey = process.env.CAIRN_API_KEY || config.apiKeys[0];
  const verdict = await cortexHealth(config, Date.now, apiKey);
  (verdict.ok ? process.stdout : process.stderr).write(`${verdict.message}\n`);
  process.exit(verdict.ok ? 0 : 1);
};

/** `cairn cortex`: the worker alone, standing by until it holds the lease, until SIGTERM/SIGINT. */
const run = async (config: Config): Promise<void> => {
  if (config.backend === 'filesystem') {
    process.stderr.write(FILESYSTEM_REFUSAL);
    process.exit(2);
  }
  const logger = createLogger(config.logLevel);
  const exit = (code: number) => logger.flush(() => process.exit(code));
  let store;
  try {
    store = await openStore(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, `cannot start: ${(error as Error).message}`);
    exit(1);
    return;
  }
  const worker = await startCortex(config, store, logger);
  logger.info({ worker_id: worker.id, backend: store.backend }, 'cairn cortex is running');
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
    .description('run the Cortex worker alone (PostgreSQL or S3; with the filesystem backend use `cairn serve --with-cortex`)')
    .option('--health', 'exit 0 if the active Cortex worker\'s heartbeat is fresh, 1 otherwise')
    .action(async (options: { health?: boolean }) => {
      const config = configOrExit();
      if (options.health) await health(config);
      else await run(config);
    });
};
