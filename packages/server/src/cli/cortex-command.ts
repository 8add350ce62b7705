import type { Command } from 'commander';

export const registerCortexCommand = (program: Command): void => {
  program
    .command('cortex')
    .description('run the Cortex worker alone, on a backend shared across replicas (otherwise: `cairn serve --with-cortex`)')
    .option('--health', 'exit 0 if the active Cortex worker\'s heartbeat is fresh and it has not been failing for more than 5 minutes, 1 otherwise')
    .option('--metrics-port <port>', 'serve GET /metrics (Prometheus) and GET /health on this port of CAIRN_HOST (CAIRN_CORTEX_METRICS_PORT; default: no port)')
    // The implementation is loaded only when the command runs (cortex-run.ts says why).
    .action(async (options: { health?: boolean; metricsPort?: string }) => {
      const { runCortex } = await import('./cortex-run.ts');
      await runCortex(options);
    });
};
