import type { BatchResult, Entry } from './api/entry.ts';
import { InternalServerError, ValidationFailedError } from './errors.ts';
import { type ClientOptions, HttpTransport, requireObject } from './http.ts';
import type {
  AuditPage, AuditQuery, Briefing, BriefingQuery, Connector, ConnectorChange, ConnectorSettings, CortexStatus, DeleteRequest, DeliveryLog,
  DigestList, DigestQuery, EntryRef, EventRequest, EventResponse, Health, HistoryRequest, HistoryResponse, IssuedKey,
  KeyRequest, ListQuery, ListResponse, ManagedKey, NeighboursRequest, NeighboursResponse, OutcomeRequest, OutcomeResponse, Pattern, PatternQuery, ReadRequest,
  SearchRequest, SearchResponse, Team, Trace, TraceQuery, Whoami, WriteBatchRequest, WriteRequest, WriteResponse,
} from './types.ts';
import type { ForgetRequest, ForgetResult, RetentionPolicy, RetentionPolicyRequest, RetentionRun } from './api/forget.ts';
import { type WatchOptions, watchEntries } from './watch.ts';

/**
 * One segment of a URL's path, percent-encoded. A `.` or `..` segment is resolved by the URL
 * itself, however it is spelled (`%2e` is a dot there too), so the request would reach another
 * route: deleting the entry `../admin/keys` / `<id>` would revoke a key. No Cairn name may be
 * one (SPEC §3), and an empty one would join two slashes: refused here, before anything is sent.
 */
const segment = (part: string, field: string): string => {
  if (typeof part !== 'string') throw new TypeError(`${field} must be a string`);
  if (part === '' || part === '.' || part === '..') {
    const message = `must not have an empty, "." or ".." segment`;
    throw new ValidationFailedError(`invalid ${field}: ${message}`, { details: [{ field, message }] });
  }
  return encodeURIComponent(part);
};

/**
 * A method's parameters, for the query string. From JavaScript a string may come where an
 * object is due (`list('repos/acme')`): spread, its characters became parameters nothing reads,
 * and the call listed every entry. Refused instead, before anything is sent.
 */
const params = (query: object): Record<string, string | number | boolean | undefined> => {
  requireObject(query, "the parameters must be an object, such as { entity_path: 'repos/acme' }");
  return query as Record<string, string | number | boolean | undefined>;
};

/** `/api/v1/<route>/<entity_path>/<key>`: each path segment and the key percent-encoded on its own. */
const entryPath = (route: string, ref: EntryRef): string => {
  if (typeof ref.entity_path !== 'string') throw new TypeError('entity_path must be a string (methods on one entry take an object such as { entity_path, key })');
  return `/api/v1/${route}/${ref.entity_path.split('/').map((part) => segment(part, 'entity_path')).join('/')}/${segment(ref.key, 'key')}`;
};

/**
 * A typed client for Cairn's REST API: one method per endpoint, answers typed as the server
 * sends them, failures thrown as the SPEC §4 error classes (`NotFoundError`, …), and 429/503
 * retried with backoff that honours `Retry-After`.
 *
 * ```ts
 * const cairn = new CairnClient({ url: 'http://127.0.0.1:8080', apiKey: process.env.CAIRN_API_KEY });
 * await cairn.write({ entity_path: 'repos/acme/api', key: 'pr-42', value: { state: 'open' } });
 * const entry = await cairn.read({ entity_path: 'repos/acme/api', key: 'pr-42' });
 * ```
 */
export class CairnClient {
  private readonly http: HttpTransport;
  private readonly options: ClientOptions;

  constructor(options: ClientOptions) {
    this.http = new HttpTransport(options);
    this.options = options;
  }

  /**
   * The same client with some options changed, for a few calls: a `signal` to cancel them,
   * another `timeoutMs`, `retries` or `agentId`. This client is left as it was.
   *
   * ```ts
   * const found = await cairn.withOptions({ signal: AbortSignal.timeout(2_000) }).search({ query: 'checkout latency' });
   * ```
   */
  withOptions(overrides: Partial<ClientOptions>): CairnClient {
    requireObject(overrides, 'withOptions takes options such as { signal, timeoutMs }');
    return new CairnClient({ ...this.options, ...overrides });
  }

  async health(): Promise<Health> {
    return this.http.json('GET', '/health');
  }

  /** Resolves when the backend answers; throws `UnavailableError` (after retries) when not. */
  async ready(): Promise<{ status: 'ready'; backend: string }> {
    return this.http.json('GET', '/ready');
  }

  /** What the calling key may do: its scopes, path prefixes, namespace and team. */
  async whoami(): Promise<Whoami> {
    return this.http.json('GET', '/api/v1/whoami');
  }

  /** A new version, or `unchanged: true` when identical to the current one. */
  async write(request: WriteRequest): Promise<WriteResponse> {
    return this.http.json('POST', '/api/v1/entries', { body: request });
  }

  /**
   * Several writes at once, all or nothing: a conflict (`ConflictError`, naming the item in
   * its details) or refusal of any one stores none of them.
   */
  async writeBatch(request: WriteBatchRequest): Promise<BatchResult> {
    return this.http.json('POST', '/api/v1/entries/batch', { body: request });
  }

  /** The current version, `version`, or the one current at `as_of`; `NotFoundError` when absent, deleted or expired (then). */
  async read({ version, as_of, namespace, ...ref }: ReadRequest): Promise<Entry> {
    return this.http.json('GET', entryPath('entries', ref), { query: { version, as_of, namespace } });
  }

  /** Writes a tombstone; history is kept. `NotFoundError` when there is nothing live to delete. */
  async delete({ if_version, namespace, ...ref }: DeleteRequest): Promise<void> {
    await this.http.send('DELETE', entryPath('entries', ref), { query: { if_version, namespace } });
  }

  async list(query: ListQuery = {}): Promise<ListResponse> {
    return this.http.json('GET', '/api/v1/entries', { query: params(query) });
  }

  /**
   * Every live entry matching `query`, following `next_cursor` page by page. A server that
   * answers a cursor already followed (not Cairn's doing: a proxy's cache, say) would page
   * forever: that throws `InternalServerError` instead.
   */
  async *listAll(query: Omit<ListQuery, 'cursor'> = {}): AsyncGenerator<Entry, void, undefined> {
    const followed = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...params(query), cursor });
      yield* page.entries;
      cursor = page.next_cursor ?? undefined;
      if (cursor !== undefined) {
        if (followed.has(cursor)) {
          throw new InternalServerError(`the server answered a next_cursor already followed (${cursor}): paging would never end`, { status: 200 });
        }
        followed.add(cursor);
      }
    } while (cursor !== undefined);
  }

  /** Versions newest first, tombstones included; page back with `before: next_before`. */
  async history({ limit, before, namespace, ...ref }: HistoryRequest): Promise<HistoryResponse> {
    return this.http.json('GET', entryPath('history', ref), { query: { limit, before, namespace } });
  }

  /** Entries linked to or from one, walked both ways to `depth` (only what the key may see). */
  async neighbours({ depth, relation, limit, namespace, ...ref }: NeighboursRequest): Promise<NeighboursResponse> {
    return this.http.json('GET', entryPath('neighbours', ref), { query: { depth, relation, limit, namespace } });
  }

  async search(request: SearchRequest): Promise<SearchResponse> {
    return this.http.json('POST', '/api/v1/search', { body: request });
  }

  async briefing(query: BriefingQuery = {}): Promise<Briefing> {
    return this.http.json('GET', '/api/v1/briefing', { query: params(query) });
  }

  /** Success moves each entry's confidence toward 1, failure toward 0. */
  async recordOutcome(request: OutcomeRequest): Promise<OutcomeResponse> {
    return this.http.json('POST', '/api/v1/outcomes', { body: request });
  }

  /** An event from another system, stored as a shared entry; replays are `duplicate`. */
  async ingestEvent(request: EventRequest): Promise<EventResponse> {
    return this.http.json('POST', '/api/v1/events', { body: request });
  }

  async connectors(): Promise<Connector[]> {
    return (await this.http.json<{ connectors: Connector[] }>('GET', '/api/v1/connectors')).connectors;
  }

  /** `signing_secret`: the provider's own, for providers that issue it (PagerDuty, Slack). */
  async enableConnector(name: string, body: { signing_secret?: string } = {}): Promise<ConnectorChange> {
    return this.http.json('POST', `/api/v1/connectors/${segment(name, 'name')}/enable`, { body });
  }

  async disableConnector(name: string): Promise<ConnectorChange> {
    return this.http.json('POST', `/api/v1/connectors/${segment(name, 'name')}/disable`);
  }

  async rotateConnectorSecret(name: string, body: { signing_secret?: string } = {}): Promise<ConnectorChange> {
    return this.http.json('POST', `/api/v1/connectors/${segment(name, 'name')}/rotate-secret`, { body });
  }

  /** The connector's last deliveries, newest first: time, event, delivery id, outcome and why. */
  async connectorDeliveries(name: string): Promise<DeliveryLog> {
    return this.http.json('GET', `/api/v1/connectors/${segment(name, 'name')}/deliveries`);
  }

  async updateConnectorSettings(name: string, settings: Omit<ConnectorSettings, 'learned_projects'>): Promise<{ name: string } & Required<Omit<ConnectorSettings, 'learned_projects'>>> {
    return this.http.json('PUT', `/api/v1/connectors/${segment(name, 'name')}/settings`, { body: settings });
  }

  /** A managed key; its secret (`key`) is in this answer only. */
  async createKey(request: KeyRequest): Promise<IssuedKey> {
    return this.http.json('POST', '/api/v1/admin/keys', { body: request });
  }

  /** `namespace`: only that namespace's keys (refused, 403, for one the calling key may not use). */
  async listKeys(query: { namespace?: string } = {}): Promise<ManagedKey[]> {
    return (await this.http.json<{ keys: ManagedKey[] }>('GET', '/api/v1/admin/keys', { query: { namespace: query.namespace } })).keys;
  }

  async revokeKey(id: string): Promise<void> {
    await this.http.send('DELETE', `/api/v1/admin/keys/${segment(id, 'id')}`);
  }

  async createTeam(request: { name: string; members?: string[]; namespace?: string }): Promise<Team> {
    return this.http.json('POST', '/api/v1/admin/teams', { body: request });
  }

  async listTeams(query: { namespace?: string } = {}): Promise<Team[]> {
    return (await this.http.json<{ teams: Team[] }>('GET', '/api/v1/admin/teams', { query: params(query) })).teams;
  }

  /** Replaces the members with exactly `members`. */
  async setTeamMembers(name: string, members: string[], namespace?: string): Promise<Team> {
    return this.http.json('PUT', `/api/v1/admin/teams/${segment(name, 'name')}/members`, { body: { members, ...(namespace !== undefined ? { namespace } : {}) } });
  }

  async deleteTeam(name: string, namespace?: string): Promise<void> {
    await this.http.send('DELETE', `/api/v1/admin/teams/${segment(name, 'name')}`, { query: { namespace } });
  }

  /** Remove an entry, or every entry under a path, with all versions, everywhere (audited; irreversible). */
  async forget(request: ForgetRequest): Promise<ForgetResult> {
    return this.http.json('POST', '/api/v1/admin/forget', { body: request });
  }

  async retentionPolicies(query: { namespace?: string } = {}): Promise<RetentionPolicy[]> {
    return (await this.http.json<{ policies: RetentionPolicy[] }>('GET', '/api/v1/admin/retention', { query: params(query) })).policies;
  }

  async setRetentionPolicy(request: RetentionPolicyRequest): Promise<RetentionPolicy> {
    return this.http.json('PUT', '/api/v1/admin/retention', { body: request });
  }

  async deleteRetentionPolicy(query: { entity_path?: string; namespace?: string } = {}): Promise<void> {
    await this.http.send('DELETE', '/api/v1/admin/retention', { query: params(query) });
  }

  /** A retention pass now: drops what policies no longer keep, compacts, expires old dedup records. */
  async runRetention(): Promise<RetentionRun> {
    return this.http.json('POST', '/api/v1/admin/retention/run', { body: {} });
  }

  /** The audit log, newest first; pass `next_cursor` back as `cursor`. */
  async audit(query: AuditQuery = {}): Promise<AuditPage> {
    return this.http.json('GET', '/api/v1/admin/audit', { query: params(query) });
  }

  async cortexStatus(): Promise<CortexStatus> {
    return this.http.json('GET', '/api/v1/cortex/status');
  }

  async digests(query: DigestQuery = {}): Promise<DigestList> {
    return this.http.json('GET', '/api/v1/cortex/digests', { query: params(query) });
  }

  /** Detected patterns: recurring incidents, flapping deploys, contested keys. */
  async patterns(query: PatternQuery = {}): Promise<Pattern[]> {
    return (await this.http.json<{ patterns: Pattern[] }>('GET', '/api/v1/patterns', { query: params(query) })).patterns;
  }

  /** Decision traces: causal chains of entries with the reason they were linked. */
  async traces(query: TraceQuery = {}): Promise<Trace[]> {
    return (await this.http.json<{ traces: Trace[] }>('GET', '/api/v1/traces', { query: params(query) })).traces;
  }

  /**
   * Every entry write, live (`/api/v1/stream`), reconnecting after drops:
   * `for await (const entry of cairn.watch({ entity_path: 'repos/acme' })) …`
   */
  watch(options: WatchOptions = {}): AsyncGenerator<Entry, void, undefined> {
    return watchEntries(this.http, options);
  }
}
