import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { githubDelivery, githubIssue, signDelivery } from '../helpers/provider-events.ts';

/**
 * SPEC §5 promises the OpenAPI 3.1 document of the whole API, and clients generate code from
 * it: every operation must document its success answer, and what the server really sends must
 * match what it documents. Response schemas are documentation only (app.ts passes answers
 * through unchecked), so nothing but this test holds the two together. One filesystem server
 * (with its Cortex, for digests and the briefing) is enough: the schemas are the same on
 * every backend.
 */

const ADMIN = 'openapi-admin-key-0123456789';
const auth = { 'x-cairn-api-key': ADMIN };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
type Doc = { paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>; components: Record<string, unknown> };

/** The operations the document must describe fully: the API, and the two probes. */
const inScope = (path: string): boolean => path.startsWith('/api/v1/') || path === '/health' || path === '/ready';

const operationsOf = (doc: Doc): Array<{ op: string; operation: Operation }> =>
  Object.entries(doc.paths)
    .filter(([path]) => inScope(path))
    .flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => ({ op: `${m.toUpperCase()} ${path}`, operation: item[m]! })));

/**
 * Whether an operation documents a success: a 2xx answer with a body schema, or a 204 (which
 * has no body to describe).
 */
const documentsSuccess = (operation: Operation): boolean =>
  Object.entries(operation.responses ?? {}).some(
    ([status, response]) => /^2(\d\d|XX)$/.test(status) && (status === '204' || Object.values(response.content ?? {}).some((c) => c.schema !== undefined)),
  );

describe('OpenAPI document: success responses', () => {
  let cairn: Cairn;
  let dir: string;
  let doc: Doc;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-openapi-'));
    cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: ADMIN, CAIRN_CORTEX_DEBOUNCE_MS: '100', CAIRN_SSE_KEEPALIVE_MS: '200' }, { withCortex: true });
    doc = (await cairn.call('GET', '/api/v1/openapi.json', undefined, auth)).body as Doc;
  });
  afterAll(async () => {
    await cairn?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('documents a success answer, with its schema, for every operation', () => {
    const operations = operationsOf(doc);
    expect(operations.length).toBeGreaterThan(40);
    const undocumented = operations.filter(({ operation }) => !documentsSuccess(operation)).map(({ op }) => op);
    expect(undocumented, `${undocumented.length} of ${operations.length} operations document no success answer`).toEqual([]);
  });

  it('answers every operation, on success, with what it documents', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    const validators = new Map<string, ReturnType<typeof ajv.compile>>();
    // `$ref: '#/components/schemas/…'` resolves against the root: each schema is compiled with the document's components beside it.
    const validatorFor = (op: string, status: string, schema: object) => {
      const id = `${op} ${status}`;
      if (!validators.has(id)) validators.set(id, ajv.compile({ ...schema, components: doc.components }));
      return validators.get(id)!;
    };
    const problems: string[] = [];
    const called = new Set<string>();

    /**
     * One successful call of `op` (METHOD /documented/path) at `url`: its status must be one
     * the document lists, and its body (JSON answers) must pass that status's schema.
     */
    const call = async (op: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
      const [method, path] = op.split(' ') as [string, string];
      const res = await cairn.call(method, url, body, { ...auth, ...headers });
      called.add(op);
      const operation = doc.paths[path]?.[method.toLowerCase() as (typeof METHODS)[number]];
      const response = operation?.responses?.[String(res.status)];
      if (res.status < 200 || res.status > 299) problems.push(`${op} (${url}): answered ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      else if (!response) problems.push(`${op}: answered ${res.status}, which the document does not list (${Object.keys(operation?.responses ?? {}).join(', ')})`);
      else if (res.status === 204 || response.content === undefined) {
        // No body documented (204, or /mcp's 202 for notifications alone): none sent.
        if (res.body !== null && res.body !== '') problems.push(`${op}: ${res.status} with a body, which the document does not describe`);
      } else {
        const schema = response.content?.['application/json']?.schema;
        if (!schema) problems.push(`${op}: ${res.status} documents no application/json schema`);
        else {
          const validate = validatorFor(op, String(res.status), schema);
          if (!validate(res.body)) {
            const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
            problems.push(`${op} ${res.status}: ${errors.join('; ')}`);
          }
        }
      }
      return res;
    };

    /** A streamed answer (SSE, an archive): exempt from body validation, but its status and media type must be documented. */
    const stream = async (op: string, url: string) => {
      called.add(op);
      const controller = new AbortController();
      const res = await fetch(cairn.url + url, { headers: auth, signal: controller.signal });
      const [method, path] = op.split(' ') as [string, string];
      const documented = Object.keys(doc.paths[path]?.[method.toLowerCase() as 'get']?.responses?.[String(res.status)]?.content ?? {});
      const type = res.headers.get('content-type')?.split(';')[0] ?? '';
      if (res.status !== 200) problems.push(`${op}: answered ${res.status}`);
      else if (!documented.includes(type)) problems.push(`${op}: answered ${type}, documented ${documented.join(', ') || 'nothing'}`);
      controller.abort();
      await res.body?.cancel().catch(() => {});
    };

    // System.
    await expect.poll(async () => (await cairn.call('GET', '/ready')).status, { timeout: 15_000 }).toBe(200);
    await call('GET /health', '/health');
    await call('GET /ready', '/ready');
    await call('GET /api/v1/openapi.json', '/api/v1/openapi.json');
    await call('GET /api/v1/whoami', '/api/v1/whoami');

    // Entries.
    const incident = { entity_path: 'incidents/api', key: 'INC-1', value: { title: 'Checkout timing out', status: 'open', service: 'api' }, event_type: 'incident.triggered' };
    await call('POST /api/v1/entries', '/api/v1/entries', { ...incident, similar: true });
    await call('POST /api/v1/entries', '/api/v1/entries', incident);
    await call('POST /api/v1/entries/batch', '/api/v1/entries/batch', {
      entries: [
        { entity_path: 'repos/acme/api', key: 'readme', value: 'Checkout service: retries on timeout', links: [{ entity_path: 'incidents/api', key: 'INC-1', relation: 'see_also' }] },
        { entity_path: 'repos/acme/api', key: 'owner', value: 'team payments', tags: ['ownership'] },
      ],
    });
    await call('GET /api/v1/entries', '/api/v1/entries?entity_path=repos/acme');
    await call('GET /api/v1/entries/{entity_path}/{key}', '/api/v1/entries/incidents/api/INC-1');
    await call('GET /api/v1/history/{entity_path}/{key}', '/api/v1/history/incidents/api/INC-1');
    await call('GET /api/v1/neighbours/{entity_path}/{key}', '/api/v1/neighbours/repos/acme/api/readme');
    await call('POST /api/v1/search', '/api/v1/search', { query: 'checkout timeout' });
    await call('POST /api/v1/search', '/api/v1/search', { query: 'checkout', discredited: 'apart' });
    const event = { source: 'ci', entity_path: 'repos/acme/api', key: 'deploy', value: { state: 'success', sha: 'abc123' }, event_type: 'deploy.finished', event_id: 'ci-1' };
    await call('POST /api/v1/events', '/api/v1/events', event);
    await call('POST /api/v1/events', '/api/v1/events', event);
    // Two agents rewriting one key back and forth (a contested key, and a pattern), and
    // outcomes that disagree (a contested entry) and that lower a confidence (a drop).
    for (const [agent_id, owner] of [['alpha', 'team payments'], ['beta', 'team checkout'], ['alpha', 'team payments']]) {
      await call('POST /api/v1/entries', '/api/v1/entries', { entity_path: 'incidents/api', key: 'owner', value: owner, agent_id });
    }
    await call('POST /api/v1/outcomes', '/api/v1/outcomes', { entries: [{ entity_path: 'repos/acme/api', key: 'readme' }], outcome: 'success' });
    await call('POST /api/v1/outcomes', '/api/v1/outcomes', { entries: [{ entity_path: 'repos/acme/api', key: 'readme' }, { entity_path: 'incidents/api', key: 'INC-1' }], outcome: 'failure' });
    await call('POST /api/v1/outcomes', '/api/v1/outcomes', { entries: [{ entity_path: 'repos/acme/api', key: 'owner', version: 99 }], outcome: 'failure' });
    await stream('GET /api/v1/stream', '/api/v1/stream');

    // Connectors and a delivery (GitHub sends no headers: its URL carries the key).
    await call('GET /api/v1/connectors', '/api/v1/connectors');
    const enabled = await call('POST /api/v1/connectors/{name}/enable', '/api/v1/connectors/github/enable', {});
    await call('POST /api/v1/connectors/{name}/enable', '/api/v1/connectors/github/enable', {});
    const hook = new URL(enabled.body.webhook_url as string);
    const delivery = githubIssue('acme/api', 7, Date.now());
    await call('POST /api/v1/webhooks/{connector}', hook.pathname + hook.search, delivery.body, signDelivery(delivery, enabled.body.signing_secret));
    await call('POST /api/v1/webhooks/{connector}', hook.pathname + hook.search, delivery.body, signDelivery(delivery, enabled.body.signing_secret));
    const ping = githubDelivery('ping', 'ping-1', { zen: 'Keep it logically awesome.', hook_id: 1 });
    await call('POST /api/v1/webhooks/{connector}', hook.pathname + hook.search, ping.body, signDelivery(ping, enabled.body.signing_secret));
    await call('GET /api/v1/connectors/{name}/deliveries', '/api/v1/connectors/github/deliveries');
    await call('PUT /api/v1/connectors/{name}/settings', '/api/v1/connectors/jira/settings', { projects: { '10001': 'OPS' } });
    await call('GET /api/v1/connectors', '/api/v1/connectors');
    await call('POST /api/v1/connectors/{name}/rotate-secret', '/api/v1/connectors/github/rotate-secret', {});
    await call('POST /api/v1/connectors/{name}/disable', '/api/v1/connectors/github/disable');

    // The Cortex: wait for the contested key's pattern (its digest is compiled by then), then
    // read what it compiled. No trace: that takes a failed deploy and an incident from the connectors.
    await expect
      .poll(async () => (await cairn.call('GET', '/api/v1/patterns', undefined, auth)).body.patterns?.length ?? 0, { timeout: 20_000 })
      .toBeGreaterThan(0);
    await call('GET /api/v1/cortex/status', '/api/v1/cortex/status');
    await call('GET /api/v1/cortex/digests', '/api/v1/cortex/digests');
    await call('GET /api/v1/patterns', '/api/v1/patterns');
    await call('GET /api/v1/traces', '/api/v1/traces');
    await call('GET /api/v1/briefing', '/api/v1/briefing');
    await call('GET /api/v1/briefing', '/api/v1/briefing?entity_path=incidents&discredited=apart&max_chars=600');
    await stream('GET /api/v1/cortex/stream', '/api/v1/cortex/stream');

    // Admin: keys, teams, retention, audit, export, forget.
    await call('POST /api/v1/admin/teams', '/api/v1/admin/teams', { name: 'payments', members: ['ann'] });
    await call('GET /api/v1/admin/teams', '/api/v1/admin/teams');
    await call('PUT /api/v1/admin/teams/{name}/members', '/api/v1/admin/teams/payments/members', { members: ['ann', 'bob'] });
    const issued = await call('POST /api/v1/admin/keys', '/api/v1/admin/keys', { name: 'triage-bot', scopes: ['read'], prefixes: ['incidents'], team: 'payments' });
    await call('GET /api/v1/admin/keys', '/api/v1/admin/keys');
    await call('DELETE /api/v1/admin/keys/{id}', `/api/v1/admin/keys/${issued.body.id}`);
    await call('DELETE /api/v1/admin/teams/{name}', '/api/v1/admin/teams/payments');
    await call('PUT /api/v1/admin/retention', '/api/v1/admin/retention', { entity_path: 'repos', keep_versions: 1 });
    await call('GET /api/v1/admin/retention', '/api/v1/admin/retention');
    await call('POST /api/v1/admin/retention/run', '/api/v1/admin/retention/run', {});
    await call('DELETE /api/v1/admin/retention', '/api/v1/admin/retention?entity_path=repos');
    await stream('GET /api/v1/admin/export', '/api/v1/admin/export');
    await call('POST /api/v1/admin/forget', '/api/v1/admin/forget', { entity_path: 'repos/acme/api', key: 'owner', reason: 'test' });
    await call('DELETE /api/v1/entries/{entity_path}/{key}', '/api/v1/entries/incidents/api/INC-1');
    await call('GET /api/v1/admin/audit', '/api/v1/admin/audit?limit=20');

    // MCP over HTTP: not under /api/v1, but documented, and held to it when it is called.
    const mcp = { accept: 'application/json, text/event-stream' };
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'openapi-test', version: '1' } };
    await call('POST /mcp', '/mcp', { jsonrpc: '2.0', id: 1, method: 'initialize', params: init }, mcp);
    await call('POST /mcp', '/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }, mcp);
    await call('POST /mcp', '/mcp', [
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'memory_read', arguments: { entity_path: 'incidents/api', key: 'INC-1' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { jsonrpc: '2.0', id: 4, method: 'no/such/method' },
    ], mcp);

    expect(problems).toEqual([]);
    const uncalled = operationsOf(doc).map(({ op }) => op).filter((op) => !called.has(op));
    expect(uncalled, 'operations this test does not call').toEqual([]);
  });
});
