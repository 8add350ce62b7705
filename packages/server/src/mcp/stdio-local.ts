import type { Logger } from 'pino';
import type { ServiceDeps } from '../services/context.ts';
import type { CallScope } from './call-tool.ts';
import type { StdioSession } from './stdio.ts';
import { SERVED_OPERATIONS, serviceOperations } from './service-operations.ts';

/** What a `cairn mcp` that serves memory itself runs on: the services' dependencies over the backend it opened. */
export interface LocalParts {
  readonly deps: ServiceDeps;
  readonly logger: Logger;
  /** What is served, for the banner: "the filesystem backend in /home/me/.local/share/cairn". */
  readonly serving: string;
  /** Stops what was opened (the store last). */
  close(): Promise<void>;
  /** Deferred start-up work (StdioSession.begin): the embedder's warm-up. */
  begin?(): void;
}

/**
 * `cairn mcp` with no server address: the tool calls run on the services over the backend
 * this process opened, as `/mcp` runs them, with no HTTP in between. The caller is whoever
 * launched the process, who can already read the data directory or holds the database URL:
 * its calls work as the server's own work does, without a key, in CAIRN_NAMESPACE, writing
 * as CAIRN_AGENT_ID.
 */
export const localSession = ({ deps, logger, serving, close, begin }: LocalParts): StdioSession => {
  const { namespace, agentId } = deps.config;
  let calls = 0;
  return {
    operations: SERVED_OPERATIONS,
    scopeOf: (requestId): CallScope => {
      // A log line names the call: a count of our own, and the JSON-RPC id the client gave it.
      const id = `mcp-${++calls}${requestId === undefined ? '' : `-${String(requestId).slice(0, 64)}`}`;
      return {
        ops: serviceOperations(deps, { requestId: id, namespace, agentId }),
        requestId: id,
        onBug: (error) => logger.error({ err: error, request_id: id }, 'MCP tool failed'),
        onDamaged: (error) => logger.error({ err: error, request_id: id }, `stored data is damaged: ${error.message}`),
      };
    },
    banner: `serving ${serving} in this process (namespace ${namespace}, writing as ${agentId})`,
    close,
    ...(begin ? { begin } : {}),
  };
};
