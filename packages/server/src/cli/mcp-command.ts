import type { Command } from 'commander';
import type { McpFlags } from './mcp-run.ts';

/**
 * `cairn mcp`: the local stdio MCP server. With a server address (CAIRN_HTTP_URL or --url) it
 * forwards every call to that server; without one it opens the configured backend itself.
 */
export const registerMcpCommand = (program: Command): void => {
  program
    .command('mcp')
    .description('run an MCP server on stdin/stdout: forwarding to CAIRN_HTTP_URL (with CAIRN_API_KEY) when set, else serving the configured backend itself')
    .option('--url <url>', 'server address to forward to (default CAIRN_HTTP_URL)')
    .option('--data-dir <dir>', 'without a server address: the data directory (CAIRN_DATA_DIR, default $XDG_DATA_HOME/cairn or ~/.local/share/cairn)')
    .option('--with-cortex', 'without a server address: also run the Cortex worker in this process')
    // The implementation is loaded only when the command runs (mcp-run.ts says why).
    .action(async function (this: Command) {
      const { runMcp } = await import('./mcp-run.ts');
      await runMcp(this.opts<McpFlags>());
    });
};
