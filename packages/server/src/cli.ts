#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, type ConfigFlags, parseConfig } from './config.ts';
import { redactCredentials } from './domain/redact-credentials.ts';
import { SettingError } from './domain/setting-error.ts';
import { createLogger } from './http/logger.ts';
import { startServer } from './server.ts';
import { unusablePlaceOf } from './store/backends.ts';
import { registerArchiveCommands } from './cli/archive-commands.ts';
import { registerBatchCommand } from './cli/batch-command.ts';
import { sayFailure } from './cli/command-exit.ts';
import { registerForgetCommands } from './cli/forget-commands.ts';
import { registerKeysCommands } from './cli/keys-commands.ts';
import { registerClientCommands } from './cli/client-commands.ts';
import { registerMcpCommand } from './cli/mcp-command.ts';
import { registerCortexCommand } from './cli/cortex-command.ts';
import { registerHealthcheckCommand } from './cli/healthcheck-command.ts';
import { registerModelCommand } from './cli/model-command.ts';
import { VERSION } from './version.ts';

/** Past every step's own bound (server.ts), and under the 30 s a container gets before SIGKILL. */
const SHUTDOWN_DEADLINE_MS = 25_000;

const port = (value: string): string => {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('expected a port number 0–65535');
  return value;
};

/** `cairn serve`: run the HTTP API until SIGINT/SIGTERM, then shut down gracefully. */
const serve = async (flags: ConfigFlags & { withCortex?: boolean }): Promise<void> => {
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

const program = new Command()
  .name('cairn')
  .description('Cairn: shared memory for software agents')
  .version(VERSION, '-v, --version')
  // Bad usage the parser catches (an unknown command or option, a missing or invalid value)
  // exits 2, as every other usage or configuration error does, keeping 1 for refusals.
  // Set before the commands are added, which inherit both settings.
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
  .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'cairn: ')) });

program
  .command('serve')
  .description('run the HTTP API (and MCP at /mcp) on the configured backend')
  .option('-p, --port <port>', 'port to listen on (CAIRN_PORT, default 8080)', port)
  .option('--host <host>', 'address to bind (CAIRN_HOST, default 127.0.0.1)')
  .option('--data-dir <dir>', 'data directory of the default backend (CAIRN_DATA_DIR, default /data/.cairn)')
  .option('--with-cortex', 'also run the Cortex worker in this process (digests, patterns, traces)')
  .action(async (options: ConfigFlags & { withCortex?: boolean }) => serve(options));

registerMcpCommand(program);
registerCortexCommand(program);
registerHealthcheckCommand(program);
registerClientCommands(program);
registerBatchCommand(program);
registerModelCommand(program);
registerArchiveCommands(program);
registerForgetCommands(program);
registerKeysCommands(program);

await program.parseAsync(process.argv);
