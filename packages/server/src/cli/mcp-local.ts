import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CairnError } from 'cairn-memory-client';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { unavailable } from '../domain/errors.ts';
import type { CallScope } from '../mcp/call-tool.ts';
import type { MemoryOperations, OperationName } from '../mcp/operations.ts';
import { SERVED_OPERATIONS } from '../mcp/service-operations.ts';
import type { StdioSession } from '../mcp/stdio.ts';
import { forwardingSession } from '../mcp/stdio-forward.ts';
import { localSession } from '../mcp/stdio-local.ts';
import { createRuntime } from '../runtime.ts';
import { startServer } from '../server.ts';
import { capabilitiesOf, localDirectoryOf } from '../store/backends.ts';
import { DirectoryLockedError, type LockHolder, lockHolder } from '../store/fs/dir-lock.ts';
import { loopbackFetch } from './loopback-fetch.ts';
import { OWNER_NOTE, type OwnerNote, readNote, removeNote, writeNote } from './mcp-owner-note.ts';

/**
 * `cairn mcp` with no server address, serving memory itself.
 *
 * A backend several processes may open at once (PostgreSQL, S3): each `cairn mcp` opens it.
 *
 * A data directory, which one process at a time opens: the first `cairn mcp` on it opens it,
 * and also listens on a loopback port behind a key it makes up, and says where in a file in the
 * directory (readable by its user alone). Each later `cairn mcp` on that directory forwards
 * its calls there: several sessions of an agent, or several agents, share one memory with
 * nothing else to run. When the first process ends, a forwarder's next call finds it gone, and
 * the forwarder opens the directory itself (or finds who did) and carries on with the call.
 */

/** How long to wait for a data directory's owner that is starting or stopping, and for a call to find the next one. */
const OWNER_WAIT_MS = 30_000;
/** A lock taken this recently may belong to a `cairn mcp` still opening the directory (its note not yet written). */
const STARTING_MS = 30_000;
const RETRY_EVERY_MS = 100;
/** How long the owner named in a note gets to answer /health before the note is taken for stale. */
const ANSWER_MS = 2_000;

/** Calls that may run again after a connection was lost mid-call: reads, and a write (an unchanged value makes no new version). */
const REPEATABLE: ReadonlySet<OperationName> = new Set(['read', 'list', 'history', 'neighbours', 'search', 'briefing', 'digests', 'write']);

/** Whether running a call twice changes nothing; a compare-and-set write would conflict with itself. */
export const repeatable = (name: OperationName, raw: unknown): boolean =>
  REPEATABLE.has(name) && !(name === 'write' && (raw as { if_version?: unknown } | null)?.if_version !== undefined);

/**
 * The owner could not be reached, or went away mid-call: worth finding the owner again. Its
 * own answers (a 503 from an embedding endpoint that is down) are the caller's to read.
 */
const ownerGone = (error: unknown): boolean => error instanceof CairnError && error.code === 'NETWORK';

/** Whether the process at `url` answers at all (the note may name a process long gone, its pid since reused). */
const answers = async (url: string): Promise<boolean> => {
  try {
    const res = await loopbackFetch(`${url}/health`, { signal: AbortSignal.timeout(ANSWER_MS) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
};

/** The request never reached a server, so any call may be sent again. */
const neverSent = (error: unknown): boolean => (error as { cause?: { cause?: { code?: string } } }).cause?.cause?.code === 'ECONNREFUSED';

interface Delegate {
  readonly session: StdioSession;
  /** The process forwarded to; null when this process serves the calls. */
  readonly ownerPid: number | null;
}

/** A data directory shared by the `cairn mcp` processes on it (see the top of this file). */
class SharedDirectory implements StdioSession {
  readonly operations = SERVED_OPERATIONS;
  private current!: Delegate;
  private finding: Promise<void> | null = null;
  /** Whether the session began (StdioSession.begin): a delegate taking over later begins at once. */
  private begun = false;

  private readonly config: Readonly<Config>;
  private readonly logger: Logger;
  private readonly dir: string;
  private readonly withCortex: boolean;

  constructor(config: Readonly<Config>, logger: Logger, dir: string, withCortex: boolean) {
    this.config = config;
    this.logger = logger;
    this.dir = dir;
    this.withCortex = withCortex;
  }

  get banner(): string {
    return this.current.session.banner;
  }

  async start(): Promise<void> {
    this.current = await this.openOrFind(null);
  }

  scopeOf(requestId: Parameters<StdioSession['scopeOf']>[0]): CallScope {
    // One scope for the call (its id, its log lines) from whoever serves the directory now:
    // the id a failed call's answer names is the one its log lines carry.
    const first = { delegate: this.current, scope: this.current.session.scopeOf(requestId) };
    const local = first.scope;
    const ops: Partial<MemoryOperations> = {};
    for (const name of this.operations) (ops as Record<string, unknown>)[name] = (raw: unknown) => this.call(name, raw, requestId, first);
    return { ops, ...(local.requestId === undefined ? {} : { requestId: local.requestId }), onBug: local.onBug, ...(local.onDamaged ? { onDamaged: local.onDamaged } : {}) };
  }

  begin(): void {
    this.begun = true;
    this.current.session.begin?.();
  }

  async close(): Promise<void> {
    await this.finding?.catch(() => {});
    await this.current.session.close();
  }

  /** One call on whoever serves the directory now; if the owner went away, on the next one. */
  private async call(
    name: OperationName,
    raw: unknown,
    requestId: Parameters<StdioSession['scopeOf']>[0],
    first: { delegate: Delegate; scope: CallScope },
  ): Promise<unknown> {
    const deadline = Date.now() + OWNER_WAIT_MS;
    for (;;) {
      const delegate = this.current;
      const scope = delegate === first.delegate ? first.scope : delegate.session.scopeOf(requestId);
      const run = scope.ops[name] as (raw: unknown) => Promise<unknown>;
      try {
        return await run(raw);
      } catch (error) {
        if (delegate.ownerPid === null || !ownerGone(error) || Date.now() > deadline) throw error;
        // Lost mid-call: the owner may have made the change; only what may run twice runs again.
        const again = repeatable(name, raw) || neverSent(error);
        await this.findOwner(delegate).catch((failure: unknown) => {
          // Said to the model as the tool error it is, not as a bug of ours.
          throw unavailable(`the process serving the data directory went away, and no other could take it over: ${(failure as Error).message}`, failure);
        });
        if (!again) throw error;
      }
    }
  }

  /** Replaces `failed` (once, however many calls found it gone) with whoever serves the directory now. */
  private findOwner(failed: Delegate): Promise<void> {
    if (this.current !== failed) return Promise.resolve();
    this.finding ??= (async () => {
      try {
        await sleep(RETRY_EVERY_MS);
        await failed.session.close();
        this.current = await this.openOrFind(failed.ownerPid);
        if (this.begun) this.current.session.begin?.();
        if (this.current.ownerPid !== failed.ownerPid) {
          this.logger.info({ dir: this.dir }, this.current.ownerPid === null ? 'the data directory\'s owner went away: serving it here' : 'the data directory\'s owner went away: forwarding to the next');
        }
      } finally {
        this.finding = null;
      }
    })();
    return this.finding;
  }

  /**
   * Forwards to the process that has the directory open, or opens it and serves it. Waits while
   * that process is starting (its lock new, its note not yet written) or is `stopping` (the owner
   * that just left), up to OWNER_WAIT_MS; a holder that is neither is another kind of process
   * (a `cairn serve`), and the DirectoryLockedError says which. The lock is looked at before
   * opening: an attempt to open starts reading the data directory's saved search index.
   */
  private async openOrFind(stopping: number | null): Promise<Delegate> {
    const deadline = Date.now() + OWNER_WAIT_MS;
    for (;;) {
      const holder = lockHolder(this.dir);
      if (holder === null) {
        try {
          return await this.open();
        } catch (error) {
          // Another process took the lock first: look again (a lock from another host is not ours to wait for).
          if (!(error instanceof DirectoryLockedError) || Date.now() > deadline || (error.holder?.host ?? hostname()) !== hostname()) throw error;
          await sleep(RETRY_EVERY_MS);
          continue;
        }
      }
      const note = readNote(this.dir);
      if (note?.pid === holder.pid) {
        // Written once it listens, removed before it stops: a note whose process does not answer
        // was left by a process that died, its pid now another's.
        if (await answers(note.url)) return this.forwardTo(note);
        throw new DirectoryLockedError(
          `data directory ${this.dir}: its LOCK and ${OWNER_NOTE} name process ${holder.pid}, which does not answer at ${note.url}; if no cairn runs on this directory, remove ${join(this.dir, 'LOCK')}`,
          holder,
        );
      }
      if (!this.mayBeOwner(holder, stopping) || Date.now() > deadline) {
        throw new DirectoryLockedError(
          `data directory ${this.dir} is in use by process ${holder.pid}, which serves no \`cairn mcp\` processes; if that is a \`cairn serve\`, give this client its address instead: CAIRN_HTTP_URL (and CAIRN_API_KEY)`,
          holder,
        );
      }
      await sleep(RETRY_EVERY_MS);
    }
  }

  private mayBeOwner(holder: LockHolder, stopping: number | null): boolean {
    const since = holder.since === undefined ? Number.NaN : Date.parse(holder.since);
    return holder.pid === stopping || Date.now() - since < STARTING_MS;
  }

  /** Open the directory: a server on a loopback port of its own, behind a key made up here, for the other processes. */
  private async open(): Promise<Delegate> {
    const key = randomBytes(24).toString('base64url');
    const config: Config = { ...this.config, host: '127.0.0.1', port: 0, apiKeys: [key], rateLimitRpm: 0 };
    // Its warm-up waits for the session to begin: the client's initialize is answered first.
    const server = await startServer(config, this.logger, {}, { withCortex: this.withCortex, deferWarmUp: true });
    try {
      await writeNote(this.dir, { pid: process.pid, url: server.url, key, namespace: this.config.namespace });
    } catch (error) {
      await server.close();
      throw error;
    }
    const session = localSession({
      deps: server.runtime.deps,
      logger: this.logger,
      serving: `the data directory ${this.dir} (other \`cairn mcp\` processes on it forward to this one)`,
      close: async () => {
        // Said gone first, so that no one starts forwarding to a server that is stopping.
        await removeNote(this.dir);
        await server.close();
      },
      begin: () => server.warmUp(),
    });
    return { session, ownerPid: null };
  }

  private forwardTo(note: OwnerNote): Delegate {
    // The owner's key works in the owner's namespace: forwarded, this process's calls would
    // land in another namespace than CAIRN_NAMESPACE says.
    if (note.namespace !== this.config.namespace) {
      throw new DirectoryLockedError(
        `data directory ${this.dir} is open in process ${note.pid}, working in namespace "${note.namespace}", and this one is set to "${this.config.namespace}" (CAIRN_NAMESPACE): the \`cairn mcp\` processes sharing a data directory work in one namespace`,
        null,
      );
    }
    // No retries of its own: a refused connection means the owner left, which call() handles.
    // A connection per call (loopbackFetch): a stopping owner then refuses, and never cuts a call off.
    const session = forwardingSession({ url: note.url, apiKey: note.key, agentId: this.config.agentId, retries: 0, fetch: loopbackFetch });
    return {
      session: { ...session, banner: `forwarding to process ${note.pid}, which has the data directory ${this.dir} open (at ${note.url})` },
      ownerPid: note.pid,
    };
  }
}

/** The session of a `cairn mcp` with no server address, on the backend `config` names. */
export const openLocalMemory = async (config: Readonly<Config>, logger: Logger, options: { withCortex: boolean }): Promise<StdioSession> => {
  const dir = localDirectoryOf(config.storage);
  if (dir !== null && !capabilitiesOf(config.storage).sharedAcrossReplicas) {
    const shared = new SharedDirectory(config, logger, dir, options.withCortex);
    await shared.start();
    return shared;
  }
  const runtime = await createRuntime(config, logger, { withCortex: options.withCortex });
  // The word table takes a few tenths of a second to read: once the first answers are out,
  // rather than inside the first call.
  const begin = (): void => {
    setImmediate(() => {
      try {
        runtime.search.embedder.warm?.();
      } catch (error) {
        logger.warn({ err: error }, 'loading the embedder ahead of use failed; the first embedding tries again');
      }
    });
  };
  return localSession({ deps: runtime.deps, logger, serving: `the ${config.storage.backend} backend`, close: () => runtime.close(), begin });
};
