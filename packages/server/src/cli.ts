#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander';
import type { ConfigFlags } from './config.ts';
import { registerArchiveCommands } from './cli/archive-commands.ts';
import { registerBatchCommand } from './cli/batch-command.ts';
import { registerForgetCommands } from './cli/forget-commands.ts';
import { registerKeysCommands } from './cli/keys-commands.ts';
import { registerClientCommands } from './cli/client-commands.ts';
import { registerMcpCommand } from './cli/mcp-command.ts';
import { registerCortexCommand } from './cli/cortex-command.ts';
import { registerHealthcheckCommand } from './cli/healthcheck-command.ts';
import { registerModelCommand } from './cli/model-command.ts';
import { VERSION } from './version.ts';

const port = (value: string): string => {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('expected a port number 0–65535');
  return value;
};

// Every command is defined here and in cli/*-command(s).ts with only what its definition needs
// (commander, option parsers, help text); what an action runs that loads much — the server,
// the backends' drivers, MCP, the Cortex, the archive services, the model runtime — is imported
// by that action when it runs, so that `cairn --help`, `cairn keys list` or `cairn read` do
// not pay for loading the server.
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
  // The server's whole graph is loaded only when it is to run (cli/serve-run.ts says why).
  .action(async (options: ConfigFlags & { withCortex?: boolean }) => {
    const { runServe } = await import('./cli/serve-run.ts');
    await runServe(options);
  });

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
