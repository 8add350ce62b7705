import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LoadResult, load } from './lib/load.ts';
import { startCairn } from './lib/processes.ts';
import { startPostgres } from '../test/helpers/postgres.ts';

export const SECRET = 'bench-webhook-secret';
const PULL_REQUESTS = 200;
/** Titles each pull request takes in turn: every delivery is a change to its pull request. */
const REVISIONS = 10;

/**
 * A real GitHub pull_request delivery (GitHub's own example), renumbered per pull request, in
 * REVISIONS versions of its title each, in the order they are sent: pull request 1 to 200 at
 * its first title, then each at its second, and so on. A delivery that repeats what its pull
 * request's entry holds makes no version (the connector orders deliveries by the object's
 * `updated_at`, which GitHub moves on every change), so the load sends changes, as GitHub does.
 */
export const payloads = (): string[] => {
  const all = createRequire(import.meta.url)('@octokit/webhooks-examples/api.github.com/index.json') as Array<{ name: string; examples: Array<Record<string, any>> }>;
  const template = all.find((e) => e.name === 'pull_request')!.examples.find((p) => p.action === 'opened')!;
  return Array.from({ length: PULL_REQUESTS * REVISIONS }, (_, i) => {
    const payload = structuredClone(template);
    payload.number = (i % PULL_REQUESTS) + 1;
    payload.pull_request.number = payload.number;
    payload.pull_request.title = `${payload.pull_request.title} (revision ${Math.floor(i / PULL_REQUESTS) + 1})`;
    return JSON.stringify(payload);
  });
};

/**
 * wrk script: each request sends one of the signed bodies with a fresh delivery id, so every
 * request is a new event (a new version of one of the pull requests, with a new title), never
 * a duplicate. `run`
 * prefixes the ids: wrk's Lua does not seed its random numbers, so two loads of one server
 * need prefixes of their own, or the second would replay the first's ids.
 */
const lua = (bodies: string[], run: string): string => `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-GitHub-Event"] = "pull_request"
local bodies = { ${bodies.map((b) => `[==[${b}]==]`).join(',\n')} }
local sigs = { ${bodies.map((b) => `"sha256=${createHmac('sha256', SECRET).update(b).digest('hex')}"`).join(',')} }
local n = 0
local run = "${run}"
request = function()
  n = n + 1
  local i = (n % #bodies) + 1
  wrk.headers["X-GitHub-Delivery"] = run .. "-" .. n
  wrk.headers["X-Hub-Signature-256"] = sigs[i]
  return wrk.format(nil, "/api/v1/webhooks/github", nil, bodies[i])
end
`;

export interface WebhookBench {
  payload_bytes: number;
  /** On the filesystem (the default backend). */
  ingest: LoadResult;
  /** The same load on a server on the PostgreSQL backend. */
  ingest_postgres: LoadResult;
}

/**
 * Seconds of the same load before the measured one, not counted. The goal is a rate a running
 * server sustains, and a fresh server is still compiling the delivery path: measured second by
 * second from its start (two runs), its first second took 55–58 % of the deliveries of each
 * later second and its second 83–87 %, which cost a 10 s load from the start about 6 %.
 */
export const WARM_UP_SECONDS = 3;

/** Signed GitHub deliveries per second into a Cairn server on the given backend environment. */
export const ingestRate = async (seconds: number, env: Record<string, string> = {}): Promise<LoadResult> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-hooks-'));
  const cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_CONNECTOR_GITHUB_SECRET: SECRET, ...env });
  try {
    const bodies = payloads();
    await load({ url: cairn.url, seconds: WARM_UP_SECONDS, lua: lua(bodies, 'warm-up') });
    return await load({ url: cairn.url, seconds, lua: lua(bodies, 'measured') });
  } finally {
    await cairn.stop();
    await rm(dir, { recursive: true, force: true });
  }
};

/**
 * The webhook load on the filesystem, then on PostgreSQL (a throwaway cluster, started after
 * the filesystem run so it takes no CPU from it).
 */
export const benchWebhooks = async (seconds: number, progress: (detail: string) => void = () => {}): Promise<WebhookBench> => {
  progress('filesystem');
  const ingest = await ingestRate(seconds);
  progress('PostgreSQL');
  const pg = await startPostgres();
  try {
    const ingest_postgres = await ingestRate(seconds, { CAIRN_DB_DSN: pg.dsn });
    return { payload_bytes: Buffer.byteLength(payloads()[0] as string), ingest, ingest_postgres };
  } finally {
    await pg.stop();
  }
};
