import pino from 'pino';
import { type Config, ConfigError, parseConfig } from '../config.ts';
import { SettingError } from '../domain/setting-error.ts';
import { createLogger } from '../http/logger.ts';
import { serveStdioMcp } from '../mcp/stdio.ts';
import { forwardingSession } from '../mcp/stdio-forward.ts';
import { unusablePlaceOf } from '../store/backends.ts';
import { clientOptionsFrom } from './client-env.ts';
import { sayFailure } from './command-exit.ts';
import { openLocalMemory } from './mcp-local.ts';
import { userDataDir } from '../domain/user-data-dir.ts';

// What `cairn mcp` runs, loaded by its action (mcp-command.ts) only when that command runs: the
// MCP SDK, and for a local server the server's whole graph, are no cost to the other commands.

export interface McpFlags {
  url?: string;
  dataDir?: string;
  withCortex?: boolean;
}

/** This command's failures say its name: its stdout is the protocol, and a client shows its stderr beside others'. */
const COMMAND = 'cairn mcp';

const usage = (message: string): never => {
  process.stderr.write(`${COMMAND}: ${message}\n`);
  process.exit(2);
};

/** The configuration of a `cairn mcp` that serves memory itself; a bad one exits 2. */
const localConfig = async (flags: McpFlags): Promise<Config> => {
  try {
    const dataDir = flags.dataDir ?? (process.env.CAIRN_DATA_DIR ? undefined : userDataDir(process.env));
    const config = parseConfig(process.env, dataDir === undefined ? {} : { dataDir });
    const unusable = await unusablePlaceOf(config.storage);
    if (unusable) throw new ConfigError(unusable);
    return config;
  } catch (error) {
    if (error instanceof SettingError) process.exit(sayFailure(error, COMMAND));
    throw error;
  }
};

/** `cairn mcp` with no server address: serve the configured backend from this process (mcp-local.ts). */
const serveLocally = async (flags: McpFlags): Promise<void> => {
  const config = await localConfig(flags);
  // stdout carries the protocol alone: the log goes to stderr, which MCP clients keep.
  const logger = createLogger(config.logLevel, pino.destination({ dest: 2, sync: true }));
  let session;
  try {
    session = await openLocalMemory(config, logger, { withCortex: flags.withCortex === true });
  } catch (error) {
    // A setting to change (a data directory this user cannot make or write) is said as above;
    // one another process holds is a failure to open, with what that process is.
    if (error instanceof SettingError && !error.held) process.exit(sayFailure(error, COMMAND));
    process.stderr.write(`${COMMAND}: cannot open the ${config.storage.backend} backend: ${(error as Error).message}\n`);
    process.exit(1);
  }
  await serveStdioMcp(session);
};

/** `cairn mcp` with these flags: forwarding to a server address when one is given, else serving locally. */
export const runMcp = async (flags: McpFlags): Promise<void> => {
  const forwarding = flags.url !== undefined || Boolean(process.env.CAIRN_HTTP_URL);
  if (!forwarding) return serveLocally(flags);
  if (flags.dataDir !== undefined || flags.withCortex) usage('--data-dir and --with-cortex serve memory in this process: leave out CAIRN_HTTP_URL and --url to use them');
  let options;
  try {
    options = clientOptionsFrom(process.env, { url: flags.url });
  } catch (error) {
    if (!(error instanceof SettingError)) throw error;
    process.exit(sayFailure(error, COMMAND));
  }
  await serveStdioMcp(forwardingSession(options));
};
