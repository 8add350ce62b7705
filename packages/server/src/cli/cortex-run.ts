import { type Config, type ConfigFlags, parseConfig } from '../config.ts';
import { cortexHealth } from '../cortex/health.ts';
import { startCortex } from '../cortex/start-cortex.ts';
import { redactCredentials } from '../domain/redact-credentials.ts';
import { SettingError } from '../domain/setting-error.ts';
import { registerCortexMetrics } from '../http/cortex-metrics.ts';
import { createLogger } from '../http/logger.ts';
import { createProcessMetrics } from '../http/metrics.ts';
import { writeKnownLink } from '../services/write-known-link.ts';
import { capabilitiesOf, openBackend, sharedBackends } from '../store/backends.ts';
import { sayFailure } from './command-exit.ts';
import { type CortexMetricsServer, serveCortexMetrics } from './cortex-metrics-server.ts';

// What `cairn cortex` runs, loaded by its action (cortex-command.ts) only when that command runs:
// the worker, its metrics and the backends' drivers are no cost to the other commands.

const notShared = (backend: string): string =>
  `cairn cortex: the ${backend} backend keeps its data inside the one server process that owns it, ` +
  'so the Cortex cannot run as a separate worker beside it. Run it embedded: `cairn serve --with-cortex`. ' +
  `For a separate worker, use a backend shared across replicas: ${sharedBackends().join(' or ')}.\n`;

/**
 * The configuration, or exit saying what is wrong with it: with its own code (2), or 1 for a
 * health check, whose 2 is reserved to Docker (a configuration it cannot read is unhealthy).
 */
const configOrExit = (forHealth: boolean, flags: ConfigFlags = {}): Readonly<Config> => {
  try {
    return parseConfig(process.env, flags);
  } catch (error) {
    if (!(error instanceof SettingError)) throw error;
    const code = sayFailure(error);
    process.exit(forHealth ? 1 : code);
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

/**
 * `cairn cortex`: the worker alone, standing by until it holds the lease, until SIGTERM/SIGINT.
 * With CAIRN_CORTEX_METRICS_PORT (or --metrics-port) it also serves /metrics and /health on
 * CAIRN_HOST; the port is taken first, so one that cannot be had exits 2 before anything opens.
 */
const run = async (config: Config): Promise<void> => {
  if (!capabilitiesOf(config.storage).sharedAcrossReplicas) {
    process.stderr.write(notShared(config.storage.backend));
    process.exit(2);
  }
  const logger = createLogger(config.logLevel);
  const exit = (code: number) => logger.flush(() => process.exit(code));
  const metrics = createProcessMetrics();
  let running = false;
  let port: CortexMetricsServer | null = null;
  if (config.cortexMetricsPort !== undefined) {
    try {
      port = await serveCortexMetrics(metrics, config.host, config.cortexMetricsPort, () => running);
    } catch (error) {
      if (!(error instanceof SettingError)) throw error;
      exit(sayFailure(error));
      return;
    }
  }
  let backend;
  try {
    backend = await openBackend(config.storage, logger);
  } catch (error) {
    // A setting to change is one line, as `cairn serve` says it; anything else a fatal log line.
    let code = 1;
    if (error instanceof SettingError) code = sayFailure(error);
    else logger.fatal({ err: error }, `cannot start: ${redactCredentials((error as Error).message)}`);
    await port?.close();
    exit(code);
    return;
  }
  const { store } = backend;
  const worker = await startCortex(config, backend, store, logger, (ns, known) => writeKnownLink({ store, now: Date.now }, ns, known));
  registerCortexMetrics(metrics, worker);
  running = true;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  logger.info({ worker_id: worker.id, backend: backend.name, ...(port ? { metrics_url: `http://${host}:${port.port}/metrics` } : {}) }, 'cairn cortex is running');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return exit(1);
    stopping = true;
    running = false;
    logger.info({ signal }, 'cortex shutting down');
    setTimeout(() => exit(1), 15_000).unref();
    void worker
      .stop()
      .then(() => store.close())
      .then(() => port?.close())
      .then(() => exit(0), (error: unknown) => {
        logger.error({ err: error }, 'cortex shutdown failed');
        exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
};

/** `cairn cortex` with these options: the health check with --health, else the worker. */
export const runCortex = async (options: { health?: boolean; metricsPort?: string }): Promise<void> => {
  const config = configOrExit(options.health === true, options.metricsPort === undefined ? {} : { cortexMetricsPort: options.metricsPort });
  if (options.health) await health(config);
  else await run(config);
};
