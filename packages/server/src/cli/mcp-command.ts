import type { Command } from 'commander';
import { ConfigError } from '../config.ts';
import { runStdioMcp } from '../mcp/stdio.ts';
import { clientOptionsFrom } from './client-env.ts';

/** `cairn mcp`: the local stdio MCP server, forwarding to CAIRN_HTTP_URL with CAIRN_API_KEY. */
export const registerMcpCommand = (program: Command): void => {
  program
    .command('mcp')
    .description('run an MCP server on stdin/stdout that forwards to CAIRN_HTTP_URL (with CAIRN_API_KEY)')
    .option('--url <url>', 'server address (default CAIRN_HTTP_URL)')
    .action(async function (this: Command) {
      let options;
      try {
        options = clientOptionsFrom(process.env, { url: this.opts<{ url?: string }>().url });
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        process.stderr.write(`cairn mcp: ${error.message}\n`);
        process.exit(2);
      }
      await runStdioMcp(options);
    });
};
