import type { Command } from 'commander';
import type { ExportFlags } from './archive-run.ts';
import { reportingFailures } from './command-exit.ts';

/** The implementations are loaded only when a command runs (archive-run.ts says why). */
export const registerArchiveCommands = (program: Command): void => {
  program
    .command('export')
    .description('write an archive of a namespace (or of all) with every version: from a running server (CAIRN_HTTP_URL + an admin key), else from the configured backend')
    .option('-o, --output <file>', 'write to this file (default: standard output)')
    .option('-n, --namespace <namespace>', 'the namespace to export (default: the key\'s own, or CAIRN_NAMESPACE / "default")')
    .option('--all', 'every namespace')
    .option('--gzip', 'compress the archive with gzip')
    .option('--url <url>', 'the server to export from (CAIRN_HTTP_URL)')
    .action(
      reportingFailures(async (flags: ExportFlags) => {
        const { runExport } = await import('./archive-run.ts');
        await runExport(flags);
      }),
    );
  program
    .command('import')
    .argument('<file>', 'an archive written by `cairn export` (plain or gzip); a file, not a pipe')
    .description('load an archive into the configured backend (a missing data directory is created), keeping versions, times and writers; idempotent and resumable')
    .option('--progress', 'print "landed N entries" as the archive\'s entries become durable in the target')
    .action(
      reportingFailures(async (file: string, flags: { progress?: boolean }) => {
        const { runImport } = await import('./archive-run.ts');
        await runImport(file, flags);
      }),
    );
};
