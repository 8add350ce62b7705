import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { CortexFeed } from '../cortex/cortex-feed.ts';
import type { SearchIndex } from '../ports/search-index.ts';
import type { Store } from '../ports/store.ts';
import type { KeyResolver } from '../services/admin/key-resolver.ts';
import type { ServiceDeps } from '../services/context.ts';
import type { HttpDrain } from './drain.ts';
import type { Metrics } from './metrics.ts';

/**
 * What the HTTP transport serves: the parts of the running system it needs (runtime.ts
 * builds them; a Runtime is one).
 */
export interface AppParts {
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  readonly deps: ServiceDeps;
  readonly store: Store;
  readonly metrics: Metrics;
  readonly search: { readonly index: SearchIndex };
  readonly cortexFeed: CortexFeed;
}

/**
 * What every group of routes is given: the running system's parts (the runtime, see
 * runtime.ts) and the HTTP layer's own (keys, drain). One shape for all, so registering a
 * group is always `app.register(routes, http)`.
 */
export interface HttpContext {
  readonly config: Readonly<Config>;
  readonly deps: ServiceDeps;
  readonly store: Store;
  readonly metrics: Metrics;
  readonly cortexFeed: CortexFeed;
  readonly keys: KeyResolver;
  readonly drain: HttpDrain;
}

/** A group of routes, registered as a fastify plugin with the HTTP context as its options. */
export type RoutePlugin = (app: FastifyInstance, http: HttpContext) => Promise<void>;
