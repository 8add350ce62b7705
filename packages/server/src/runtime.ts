import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { CortexFeed } from './cortex/cortex-feed.ts';
import type { CortexWorker } from './cortex/worker.ts';
import { BuiltinEmbedder } from './embed/builtin-embedder.ts';
import { openLocalModel } from './embed/local-model.ts';
import { OpenAiEmbedder } from './embed/openai-embedder.ts';
import { WithLexicon } from './embed/with-lexicon.ts';
import { countBackendErrors } from './http/backend-errors.ts';
import { type Metrics, createMetrics } from './http/metrics.ts';
import type { OpenBackend } from './ports/backend.ts';
import type { Embedder } from './ports/embedder.ts';
import type { SearchIndex } from './ports/search-index.ts';
import type { Store } from './ports/store.ts';
import { AuditLog } from './services/audit-log.ts';
import { checkSecretKey } from './services/secrets/secret-keys.ts';
import { RetentionLoop } from './services/retention/retention-loop.ts';
import type { ServiceDeps } from './services/context.ts';
import { DeliveryCounters } from './services/delivery-counters.ts';
import { DeliveryLog } from './services/delivery-log.ts';
import { writeKnownLink } from './services/write-known-link.ts';
import { openBackend } from './store/backends.ts';

/**
 * Everything a Cairn server is made of, built once from the configuration: the backend, the
 * store every caller uses, search, the audit log, the connectors' delivery counters, the
 * Cortex's event feed, an embedded Cortex when asked, and the services' dependencies. The
 * transports (HTTP routes, MCP) take it as it is; none of them builds a part of its own.
 */
export interface Runtime {
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  /** The backend's name and capabilities, and the store as opened. */
  readonly backend: OpenBackend;
  /** The store as every caller uses it: failures to reach the backend are counted in the metrics. */
  readonly store: Store;
  readonly metrics: Metrics;
  readonly search: { readonly index: SearchIndex; readonly embedder: Embedder };
  /** Compile events for /api/v1/cortex/stream, wherever the active worker runs. */
  readonly cortexFeed: CortexFeed;
  /** The Cortex worker embedded in this process (`cairn serve --with-cortex`), else null. */
  readonly cortex: CortexWorker | null;
  readonly deps: ServiceDeps;
  /**
   * Stops the parts in order — the embedded Cortex (its lease released while the backend is
   * still there), the feeds and search, the counters and audit log flushed — and closes the
   * store last, within `storeCloseMs`. Call after the transports have drained. Idempotent.
   */
  close(storeCloseMs?: number): Promise<void>;
}

export interface RuntimeOptions {
  /** Run a Cortex worker in this process. */
  withCortex?: boolean;
  /** Milliseconds since the epoch; tests move time (TTL). */
  now?: () => number;
}

/** Stopping the embedded Cortex: finish the compile under way, release the lease. */
const CORTEX_STOP_MS = 5_000;

const within = <T>(work: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms).unref())]);

/**
 * The configured embedder: an OpenAI-compatible endpoint when CAIRN_EMBEDDINGS_URL is set, a
 * local sentence model when only CAIRN_EMBEDDINGS_MODEL is (loaded, or fetched, before the
 * server listens: a model that cannot be used stops the start with the reason), else the
 * built-in one. A model keeps the built-in lexicon beside it (WithLexicon) for query
 * expansion and the word-by-word ranking, unless CAIRN_SEARCH_LEXICON=off or under the
 * previous search profile, which had neither.
 */
export const openEmbedder = async (config: Readonly<Config>, logger: Logger): Promise<Embedder> => {
  const lexicon = config.searchProfile !== 'v1';
  if (!config.embeddingsModel) return new BuiltinEmbedder({ lexicon });
  const besideLexicon = (model: Embedder): Embedder => (lexicon && config.searchLexicon ? new WithLexicon(model, new BuiltinEmbedder({ lexicon })) : model);
  if (config.embeddingsUrl) return besideLexicon(new OpenAiEmbedder({ url: config.embeddingsUrl, model: config.embeddingsModel, apiKey: config.embeddingsApiKey }));
  const started = performance.now();
  const embedder = await openLocalModel(config.embeddingsModel, { cacheDir: config.modelCache, hubUrl: config.modelHubUrl, logger });
  logger.info({ embedder: embedder.id, dimension: embedder.dimension, ms: Math.round(performance.now() - started) }, 'embedding model loaded');
  return besideLexicon(embedder);
};

export const createRuntime = async (config: Readonly<Config>, logger: Logger, options: RuntimeOptions = {}): Promise<Runtime> => {
  const now = options.now ?? Date.now;
  const backend = await openBackend(config.storage, logger, { search: true });
  const metrics = createMetrics();
  const store = countBackendErrors(backend.store, (operation) => metrics.backendErrors.inc({ backend: backend.name, operation }));
  const parts: Array<() => Promise<unknown>> = [];
  let cortex: CortexWorker | null = null;
  try {
    await checkSecretKey(store, config);
    // Where replicas share the backend, the stream follows the active worker's event log
    // wherever it runs; otherwise the worker is in this process and publishes locally.
    const cortexFeed = new CortexFeed(store, { poll: backend.capabilities.sharedAcrossReplicas, logger });
    parts.push(async () => cortexFeed.close());
    if (options.withCortex) {
      // The worker's modules (its compiler, every digest) are loaded only by a process that runs it.
      const [{ startCortex }, { registerCortexMetrics }] = await Promise.all([import('./cortex/start-cortex.ts'), import('./http/cortex-metrics.ts')]);
      cortex = await startCortex(config, backend, store, logger, (ns, known) => writeKnownLink({ store, now }, ns, known), (event) => cortexFeed.publishLocal(event));
      registerCortexMetrics(metrics, cortex);
    }
    const embedder = await openEmbedder(config, logger);
    const index = await backend.openSearch(embedder).catch(async (error: unknown) => {
      await embedder.close?.();
      throw error;
    });
    // Search stops first (parts run in order), then the embedder it feeds from.
    parts.push(async () => index.close(), async () => embedder.close?.());
    const deliveries = new DeliveryCounters(store, (connector, outcome) => metrics.connectorDeliveries.inc({ connector, outcome }));
    const audit = new AuditLog(store, now, backend.capabilities.auditWindowMs);
    parts.push(() => deliveries.close(), () => audit.drain());
    const retention = new RetentionLoop({ store, logger: logger.child({ component: 'retention' }), intervalMs: config.retentionIntervalMs, windows: config, now });
    retention.start();
    parts.unshift(() => retention.stop());
    const deps: ServiceDeps = {
      store, now, config, deliveries, deliveryLog: new DeliveryLog(store, now), audit, search: index, embedder,
      capabilities: backend.capabilities,
      ...(cortex ? { cortex } : {}),
    };

    let closing: Promise<void> | null = null;
    const close = (storeCloseMs = 10_000): Promise<void> => {
      closing ??= (async () => {
        try {
          if (cortex) await within(cortex.stop(), CORTEX_STOP_MS, 'stopping the cortex').catch((error: unknown) => logger.warn({ err: error }, 'cortex did not stop cleanly'));
          for (const stop of parts) await stop().catch((error: unknown) => logger.warn({ err: error }, 'a part did not stop cleanly'));
        } finally {
          // Whatever failed above, the store gets its orderly close.
          await within(backend.store.close(), storeCloseMs, 'closing the store');
        }
      })();
      return closing;
    };
    return { config, logger, backend, store, metrics, search: { index, embedder }, cortexFeed, cortex, deps, close };
  } catch (error) {
    await cortex?.stop().catch(() => {});
    for (const stop of parts) await stop().catch(() => {});
    await backend.store.close().catch(() => {});
    throw error;
  }
};
