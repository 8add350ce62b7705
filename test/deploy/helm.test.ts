import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { parse, parseAllDocuments } from 'yaml';
import { parseConfig } from '../../packages/server/src/config.ts';
import { createClient } from '../../packages/server/src/store/postgres/client.ts';
import { describe, expect, it } from 'vitest';

// The chart is rendered by helm itself (scripts/setup.sh installs it), so what is checked
// is what a cluster would receive: every document must parse, pass the Kubernetes schema of
// its kind (kubernetes-models' validators: types, required fields, enums, formats — not
// unknown fields, which only an API server's strict decoding catches), and say what this
// deployment promises for each storage backend.

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');
const chart = join(root, 'deploy/helm/cairn');
const values = parse(await readFile(join(chart, 'values.yaml'), 'utf8')) as Record<string, unknown>;

/** The seed's chart table (its `amfs.` prefix is our `cairn.`); "none" means empty. */
const SEED_VALUES: [string, unknown][] = [
  ['replicaCount', 1],
  ['image.tag', 'latest'],
  ['service.type', 'ClusterIP'],
  ['service.port', 8080],
  ['storage.backend', 'postgres'],
  ['postgres.external', false],
  ['postgres.dsn', null],
  ['postgres.storage', '10Gi'],
  ['s3.bucket', null],
  ['s3.endpoint', null],
  ['cairn.apiKeys', null],
  ['cairn.namespace', 'default'],
  ['ingress.enabled', false],
  ['cortex.enabled', true],
  ['cortex.replicas', 1],
  ['cortex.resources.requests.cpu', '50m'],
  ['cortex.resources.requests.memory', '128Mi'],
  ['cortex.resources.limits.cpu', '500m'],
  ['cortex.resources.limits.memory', '512Mi'],
  ['cortex.debounceMs', 3000],
  ['autoscaling.enabled', false],
  ['autoscaling.maxReplicas', 5],
];

const lookup = (tree: unknown, path: string): { found: boolean; value: unknown } => {
  let node: unknown = tree;
  for (const part of path.split('.')) {
    if (node === null || typeof node !== 'object' || !(part in node)) return { found: false, value: undefined };
    node = (node as Record<string, unknown>)[part];
  }
  return { found: true, value: node };
};
const isEmpty = (value: unknown): boolean => value === null || value === '' || (Array.isArray(value) && value.length === 0);

/** The parts of rendered manifests these tests read (kinds differ; all optional). */
interface Probe {
  httpGet?: { path: string };
  exec?: { command: string[] };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: unknown[];
  env?: { name: string; value?: string }[];
  envFrom?: { secretRef: { name: string } }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: unknown;
  volumeMounts?: unknown[];
}
interface Spec {
  replicas?: number;
  selector?: Record<string, string> & { matchLabels?: Record<string, string> };
  strategy?: unknown;
  template?: { metadata: { labels: Record<string, string> }; spec: { containers: Container[]; initContainers?: Container[]; volumes?: unknown[] } };
  volumeClaimTemplates?: { spec: { resources: { requests: { storage: string } } } }[];
  minReplicas?: number;
  metrics?: { resource: { target: { averageUtilization: number } } }[];
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Spec;
  stringData?: Record<string, string>;
}

const helm = async (args: string[]): Promise<string> => (await run('helm', args, { maxBuffer: 16 * 1024 * 1024 })).stdout;

/** `helm template` with these --set values, as parsed objects, each schema-validated. */
const render = async (set: Record<string, string | number | boolean>): Promise<K8sObject[]> => {
  const args = ['template', 'rel', chart, '--namespace', 'cairn-test'];
  for (const [key, value] of Object.entries(set)) args.push('--set', `${key}=${String(value)}`);
  const out = await helm(args);
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(out)) {
    expect(doc.errors).toEqual([]);
    const object = doc.toJS() as K8sObject | null;
    if (!object) continue;
    await validateSchema(object);
    objects.push(object);
  }
  return objects;
};

/** kubernetes-models/<group>/<version>/<Kind>: the core group has no group segment. */
const validateSchema = async (object: K8sObject): Promise<void> => {
  const module = `kubernetes-models/${object.apiVersion}/${object.kind}`;
  const exports = (await import(module)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = exports[object.kind];
  if (!Model) throw new Error(`no model for ${object.apiVersion} ${object.kind}`);
  expect(() => new Model(object).validate(), `${object.kind} ${object.metadata.name}`).not.toThrow();
};

const find = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in: ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
};
const kinds = (objects: K8sObject[]): string[] => objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
const pod = (workload: K8sObject) => {
  const template = workload.spec?.template;
  if (!template) throw new Error(`${workload.kind} ${workload.metadata.name} has no pod template`);
  return template;
};
const container = (workload: K8sObject): Container => {
  const first = pod(workload).spec.containers[0];
  if (!first) throw new Error(`${workload.metadata.name} has no container`);
  return first;
};
const envOf = (deployment: K8sObject): Record<string, string> =>
  Object.fromEntries((container(deployment).env ?? []).map((e) => [e.name, e.value ?? '(from secret)']));

/** Selectors that select: every workload's selector matches its pod labels; every Service
 * selects some workload's pods; every Secret named in envFrom is rendered. */
const checkWiring = (objects: K8sObject[]): void => {
  const podLabels = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet').map((w) => {
    const labels = pod(w).metadata.labels;
    for (const [k, v] of Object.entries(w.spec?.selector?.matchLabels ?? {})) expect(labels[k], `${w.metadata.name} ${k}`).toBe(v);
    for (const c of pod(w).spec.containers) {
      for (const from of c.envFrom ?? []) find(objects, 'Secret', from.secretRef.name);
    }
    return labels;
  });
  for (const service of objects.filter((o) => o.kind === 'Service')) {
    const selector = service.spec?.selector ?? {};
    expect(podLabels.some((labels) => Object.entries(selector).every(([k, v]) => labels[k] === v)), service.metadata.name).toBe(true);
  }
};

const haveHelm = await run('helm', ['version', '--short']).then(
  () => true,
  () => false,
);

describe('deploy/helm/cairn values.yaml', () => {
  it.each(SEED_VALUES)('has the seed table value %s with its default', (path, expected) => {
    const { found, value } = lookup(values, path);
    expect(found, path).toBe(true);
    if (expected === null) expect(isEmpty(value), `${path} = ${JSON.stringify(value)}`).toBe(true);
    else expect(value).toEqual(expected);
  });

  it('lists the seed table exactly (checked against the seed when it is beside the repository)', async () => {
    const seed = join(root, '../shared/seed/000_50e5821dfd286fb8.txt');
    if (!existsSync(seed)) return;
    const text = await readFile(seed, 'utf8');
    const table = text.slice(text.indexOf('### Orchestrator chart values'), text.indexOf('## Versioning'));
    const names = [...table.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => (m[1] as string).replace(/^amfs\./, 'cairn.'));
    expect(names).toEqual(SEED_VALUES.map(([name]) => name));
  });

  it('has the autoscaling and ingress options beyond the table', () => {
    expect(lookup(values, 'autoscaling.minReplicas')).toEqual({ found: true, value: 1 });
    expect(lookup(values, 'autoscaling.targetCPUUtilizationPercentage').found).toBe(true);
    expect(lookup(values, 'ingress.className').found).toBe(true);
    expect(lookup(values, 'ingress.annotations').value).toEqual({});
    expect(lookup(values, 'ingress.hosts').value).toEqual([{ host: expect.any(String), paths: [{ path: '/', pathType: 'Prefix' }] }]);
    expect(lookup(values, 'ingress.tls').value).toEqual([]);
  });

  it('defines every .Values path the templates use', async () => {
    const dir = join(chart, 'templates');
    const missing: string[] = [];
    for (const file of await readdir(dir)) {
      const text = await readFile(join(dir, file), 'utf8');
      for (const match of text.matchAll(/\.Values((?:\.[A-Za-z0-9_]+)+)/g)) {
        const path = (match[1] as string).slice(1);
        if (!lookup(values, path).found) missing.push(`${file}: .Values.${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe.runIf(haveHelm || process.env.CI)('deploy/helm/cairn rendered by helm', () => {
  it('is installed (bash scripts/setup.sh)', () => {
    expect(haveHelm).toBe(true);
  });

  it('passes helm lint --strict for each backend', async () => {
    for (const set of [[], ['--set', 'storage.backend=filesystem'], ['--set', 'storage.backend=s3', '--set', 's3.bucket=b1']]) {
      await expect(helm(['lint', '--strict', chart, ...set])).resolves.toContain('0 chart(s) failed');
    }
  });

  it('postgres (default): built-in pgvector stateful set with its volume, DSN and password in Secrets, Cortex deployment', async () => {
    const objects = await render({});
    checkWiring(objects);
    expect(kinds(objects)).toEqual([
      'Deployment/rel-cairn',
      'Deployment/rel-cairn-cortex',
      'Secret/rel-cairn',
      'Secret/rel-cairn-postgres',
      'Service/rel-cairn',
      'Service/rel-cairn-postgres',
      'ServiceAccount/rel-cairn',
      'StatefulSet/rel-cairn-postgres',
    ]);
    const pg = find(objects, 'StatefulSet', 'rel-cairn-postgres');
    expect(container(pg).image).toMatch(/^pgvector\/pgvector:/);
    expect(pg.spec?.volumeClaimTemplates?.[0]?.spec.resources.requests.storage).toBe('10Gi');
    const password = find(objects, 'Secret', 'rel-cairn-postgres').stringData?.password as string;
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(find(objects, 'Secret', 'rel-cairn').stringData).toEqual({ CAIRN_DB_DSN: `postgres://cairn:${password}@rel-cairn-postgres:5432/cairn` });

    const api = find(objects, 'Deployment', 'rel-cairn');
    expect(container(api).args).toEqual(['serve']);
    expect(envOf(api)).toMatchObject({ CAIRN_HOST: '0.0.0.0', CAIRN_PORT: '8080', CAIRN_NAMESPACE: 'default', CAIRN_CORTEX_DEBOUNCE_MS: '3000' });
    expect(envOf(api)).not.toHaveProperty('CAIRN_DATA_DIR');
    expect(envOf(api)).toMatchObject({ CAIRN_SEARCH_INDEX: 'postgres' });
    expect(envOf(await render({ 'postgres.searchIndex': 'memory' }).then((o) => find(o, 'Deployment', 'rel-cairn')))).toMatchObject({ CAIRN_SEARCH_INDEX: 'memory' });
    expect(container(api).readinessProbe?.httpGet?.path).toBe('/ready');
    expect(container(api).livenessProbe?.httpGet?.path).toBe('/health');
    expect(pod(api).spec.initContainers?.[0]?.name).toBe('wait-for-postgres');

    const cortex = find(objects, 'Deployment', 'rel-cairn-cortex');
    expect(cortex.spec?.replicas).toBe(1);
    expect(container(cortex).args).toEqual(['cortex']);
    // Its metrics port (cortex.metrics, on by default): scraped through the pod annotations.
    expect(container(cortex).ports).toEqual([{ name: 'metrics', containerPort: 9464, protocol: 'TCP' }]);
    expect(envOf(cortex)).toMatchObject({ CAIRN_HOST: '0.0.0.0', CAIRN_CORTEX_METRICS_PORT: '9464' });
    // A heap ceiling under the container's 512Mi limit (cortex.heapMiB).
    expect(envOf(cortex).NODE_OPTIONS).toBe('--max-old-space-size=384');
    expect(pod(cortex).metadata).toMatchObject({ annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9464', 'prometheus.io/path': '/metrics' } });
    expect(container(cortex).livenessProbe).toMatchObject({ httpGet: { path: '/health', port: 'metrics' } });
    expect(container(cortex).readinessProbe).toMatchObject({ exec: { command: ['cairn', 'cortex', '--health'] }, periodSeconds: 30, timeoutSeconds: 5, failureThreshold: 3 });
    expect(container(cortex).resources).toEqual({ requests: { cpu: '50m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } });
  });

  it('cortex.metrics: the port and annotations render as set; disabled, no port and the exec check as both probes', async () => {
    const moved = find(await render({ 'cortex.metrics.port': 9100 }), 'Deployment', 'rel-cairn-cortex');
    expect(container(moved).ports).toEqual([{ name: 'metrics', containerPort: 9100, protocol: 'TCP' }]);
    expect(envOf(moved)).toMatchObject({ CAIRN_CORTEX_METRICS_PORT: '9100' });
    expect(pod(moved).metadata).toMatchObject({ annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9100', 'prometheus.io/path': '/metrics' } });
    expect(parseConfig(envOf(moved)).cortexMetricsPort).toBe(9100);
    // The S3 backend's Cortex deployment too.
    const s3 = find(await render({ 'storage.backend': 's3', 's3.bucket': 'b1' }), 'Deployment', 'rel-cairn-cortex');
    expect(container(s3).ports).toEqual([{ name: 'metrics', containerPort: 9464, protocol: 'TCP' }]);

    const off = find(await render({ 'cortex.metrics.enabled': false }), 'Deployment', 'rel-cairn-cortex');
    expect(container(off).ports).toBeUndefined();
    expect(envOf(off)).not.toHaveProperty('CAIRN_CORTEX_METRICS_PORT');
    expect((pod(off).metadata as { annotations?: Record<string, string> }).annotations ?? {}).not.toHaveProperty(['prometheus.io/scrape']);
    for (const probe of [container(off).livenessProbe, container(off).readinessProbe]) {
      expect(probe).toMatchObject({ exec: { command: ['cairn', 'cortex', '--health'] }, periodSeconds: 30, timeoutSeconds: 5, failureThreshold: 3 });
    }
  });

  it('cortex.heapMiB: the worker\'s heap ceiling as set; 0 leaves Node\'s own; the API pods get none', async () => {
    const raised = find(await render({ 'cortex.heapMiB': 1536, 'cortex.resources.limits.memory': '2Gi' }), 'Deployment', 'rel-cairn-cortex');
    expect(envOf(raised).NODE_OPTIONS).toBe('--max-old-space-size=1536');
    const objects = await render({ 'cortex.heapMiB': 0 });
    expect(envOf(find(objects, 'Deployment', 'rel-cairn-cortex'))).not.toHaveProperty('NODE_OPTIONS');
    expect(envOf(find(objects, 'Deployment', 'rel-cairn'))).not.toHaveProperty('NODE_OPTIONS');
    // A NODE_OPTIONS of the user's own is used instead of the chart's, never listed twice.
    const own = find(await render({ 'cairn.extraEnv[0].name': 'NODE_OPTIONS', 'cairn.extraEnv[0].value': '--use-openssl-ca' }), 'Deployment', 'rel-cairn-cortex');
    expect(container(own).env?.filter((e) => e.name === 'NODE_OPTIONS')).toEqual([{ name: 'NODE_OPTIONS', value: '--use-openssl-ca' }]);
    // Written like the memory limit beside it: refused, not rendered as no ceiling.
    await expect(render({ 'cortex.heapMiB': '512Mi' })).rejects.toThrow(/cortex.heapMiB must be a whole number of MiB/);
  });

  it('postgres external: no database of its own, the given DSN in the Secret', async () => {
    const dsn = 'postgres://u:p@db.example.com:5432/cairn';
    const objects = await render({ 'postgres.external': true, 'postgres.dsn': dsn });
    checkWiring(objects);
    expect(kinds(objects)).not.toContain('StatefulSet/rel-cairn-postgres');
    expect(kinds(objects)).not.toContain('Secret/rel-cairn-postgres');
    expect(find(objects, 'Secret', 'rel-cairn').stringData?.CAIRN_DB_DSN).toBe(dsn);
    expect(pod(find(objects, 'Deployment', 'rel-cairn')).spec.initContainers).toBeUndefined();
  });

  it('filesystem: data directory on a volume, Cortex inside the server, no database', async () => {
    const objects = await render({ 'storage.backend': 'filesystem', 'cairn.apiKeys': 'key-one-12345' });
    checkWiring(objects);
    expect(kinds(objects)).toEqual(['Deployment/rel-cairn', 'PersistentVolumeClaim/rel-cairn-data', 'Secret/rel-cairn', 'Service/rel-cairn', 'ServiceAccount/rel-cairn']);
    const api = find(objects, 'Deployment', 'rel-cairn');
    expect(container(api).args).toEqual(['serve', '--with-cortex']);
    expect(envOf(api)).toMatchObject({ CAIRN_DATA_DIR: '/data/.cairn' });
    expect(container(api).volumeMounts).toContainEqual({ name: 'data', mountPath: '/data/.cairn' });
    expect(pod(api).spec.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: 'rel-cairn-data' } });
    expect(api.spec?.strategy).toEqual({ type: 'Recreate' });
    expect(find(objects, 'Secret', 'rel-cairn').stringData).toEqual({ CAIRN_API_KEYS: 'key-one-12345' });

    // Without persistence, each replica has its own (ephemeral) storage, as SPEC §10 says.
    const spread = await render({ 'storage.backend': 'filesystem', 'filesystem.persistence.enabled': false, replicaCount: 3 });
    const many = find(spread, 'Deployment', 'rel-cairn');
    expect(many.spec?.replicas).toBe(3);
    expect(pod(many).spec.volumes).toContainEqual({ name: 'data', emptyDir: {} });
    expect(kinds(spread)).not.toContain('PersistentVolumeClaim/rel-cairn-data');
    // Each of those pods holds data of its own: no disruption budget to block a drain.
    expect(kinds(spread)).not.toContain('PodDisruptionBudget/rel-cairn');
  });

  it('s3: bucket, prefix, region and endpoint in the env, credentials in the Secret, Cortex deployment', async () => {
    const objects = await render({
      'storage.backend': 's3',
      's3.bucket': 'cairn-data',
      's3.endpoint': 'http://minio:9000',
      's3.accessKeyId': 'AKIAEXAMPLE',
      's3.secretAccessKey': 'secret-example',
    });
    checkWiring(objects);
    expect(kinds(objects)).toEqual(['Deployment/rel-cairn', 'Deployment/rel-cairn-cortex', 'Secret/rel-cairn', 'Service/rel-cairn', 'ServiceAccount/rel-cairn']);
    for (const name of ['rel-cairn', 'rel-cairn-cortex']) {
      expect(envOf(find(objects, 'Deployment', name))).toMatchObject({
        CAIRN_OBJECT_BUCKET: 'cairn-data',
        CAIRN_OBJECT_ENDPOINT: 'http://minio:9000',
        CAIRN_OBJECT_PREFIX: 'cairn/',
        AWS_REGION: 'us-east-1',
      });
    }
    expect(find(objects, 'Secret', 'rel-cairn').stringData).toEqual({ AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret-example' });
  });

  it('ingress, autoscaling, keys and service options render as set', async () => {
    const objects = await render({
      'ingress.enabled': true,
      'ingress.className': 'nginx',
      'ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-buffering': 'off',
      'ingress.hosts[0].host': 'memory.example.com',
      'ingress.hosts[0].paths[0].path': '/',
      'ingress.hosts[0].paths[0].pathType': 'Prefix',
      'ingress.tls[0].secretName': 'memory-tls',
      'ingress.tls[0].hosts[0]': 'memory.example.com',
      'autoscaling.enabled': true,
      'autoscaling.minReplicas': 2,
      'autoscaling.maxReplicas': 7,
      'autoscaling.targetCPUUtilizationPercentage': 65,
      'cairn.apiKeys': '{key-one-12345,key-two-67890}',
      'cairn.namespace': 'team-a',
      'service.type': 'LoadBalancer',
      'service.port': 80,
      'image.tag': '1.2.3',
      'cortex.enabled': false,
    });
    checkWiring(objects);
    const ingress = find(objects, 'Ingress', 'rel-cairn');
    expect(ingress.metadata.annotations).toEqual({ 'nginx.ingress.kubernetes.io/proxy-buffering': 'off' });
    expect(ingress.spec).toEqual({
      ingressClassName: 'nginx',
      tls: [{ secretName: 'memory-tls', hosts: ['memory.example.com'] }],
      rules: [
        {
          host: 'memory.example.com',
          http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'rel-cairn', port: { number: 80 } } } }] },
        },
      ],
    });
    // Autoscaled replicas over shared data: at most one evicted at a time, the API pods alone.
    const pdb = find(objects, 'PodDisruptionBudget', 'rel-cairn');
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: find(objects, 'Deployment', 'rel-cairn').spec?.selector?.matchLabels } });
    expect(kinds(await render({ replicaCount: 3, 'podDisruptionBudget.maxUnavailable': 2 }))).toContain('PodDisruptionBudget/rel-cairn');
    expect(kinds(await render({ replicaCount: 3, 'podDisruptionBudget.enabled': false }))).not.toContain('PodDisruptionBudget/rel-cairn');
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'rel-cairn');
    expect(hpa.spec).toMatchObject({ minReplicas: 2, maxReplicas: 7, scaleTargetRef: { kind: 'Deployment', name: 'rel-cairn' } });
    expect(hpa.spec?.metrics?.[0]?.resource.target.averageUtilization).toBe(65);
    const api = find(objects, 'Deployment', 'rel-cairn');
    expect(api.spec?.replicas).toBeUndefined();
    expect(container(api).image).toBe('cairn:1.2.3');
    expect(envOf(api).CAIRN_NAMESPACE).toBe('team-a');
    // Behind the ingress's TLS the webhook URLs start with https and its host.
    expect(envOf(api).CAIRN_PUBLIC_URL).toBe('https://memory.example.com');
    const explicit = await render({ 'ingress.enabled': true, 'ingress.tls[0].secretName': 't', 'ingress.tls[0].hosts[0]': 'a.example.com', 'cairn.publicUrl': 'https://b.example.com/cairn' });
    expect(envOf(find(explicit, 'Deployment', 'rel-cairn')).CAIRN_PUBLIC_URL).toBe('https://b.example.com/cairn');
    expect(envOf(find(await render({ 'ingress.enabled': true }), 'Deployment', 'rel-cairn'))).not.toHaveProperty('CAIRN_PUBLIC_URL');
    expect(find(objects, 'Service', 'rel-cairn').spec).toMatchObject({ type: 'LoadBalancer', ports: [{ port: 80, targetPort: 'http' }] });
    expect(find(objects, 'Secret', 'rel-cairn').stringData?.CAIRN_API_KEYS).toBe('key-one-12345,key-two-67890');
    expect(kinds(objects)).not.toContain('Deployment/rel-cairn-cortex');
  });

  it('refuses settings that cannot work, saying what to change', async () => {
    const refused = async (set: Record<string, string | number | boolean>, message: RegExp) => {
      const args = ['template', 'rel', chart, ...Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${String(v)}`])];
      await expect(helm(args)).rejects.toMatchObject({ stderr: expect.stringMatching(message) });
    };
    await refused({ 'storage.backend': 'mongo' }, /storage.backend must be filesystem, postgres or s3/);
    await refused({ 'storage.backend': 's3' }, /set s3.bucket/);
    await refused({ 'postgres.external': true }, /set postgres.dsn/);
    await refused({ 'postgres.searchIndex': 'ram' }, /postgres.searchIndex must be postgres or memory/);
    await refused({ 'storage.backend': 'filesystem', replicaCount: 2 }, /belongs to one server pod/);
  });

  it('takes the public URL from a TLS host that is an address, never a wildcard', async () => {
    const publicUrl = async (set: Record<string, string | boolean>) => {
      // --set on a list item replaces the list: a host given here needs its path again.
      const path: Record<string, string> = 'ingress.hosts[0].host' in set ? { 'ingress.hosts[0].paths[0].path': '/', 'ingress.hosts[0].paths[0].pathType': 'Prefix' } : {};
      return envOf(find(await render({ 'ingress.enabled': true, ...path, ...set }), 'Deployment', 'rel-cairn')).CAIRN_PUBLIC_URL;
    };
    // A wildcard certificate: the ingress host it covers (the default values' cairn.example.com).
    expect(await publicUrl({ 'ingress.tls[0].secretName': 'wild', 'ingress.tls[0].hosts[0]': '*.example.com' })).toBe('https://cairn.example.com');
    // A named TLS host wins over a wildcard, in whichever entry it is.
    expect(await publicUrl({
      'ingress.tls[0].secretName': 'wild', 'ingress.tls[0].hosts[0]': '*.example.com',
      'ingress.tls[1].secretName': 'named', 'ingress.tls[1].hosts[0]': 'api.corp.io',
    })).toBe('https://api.corp.io');
    // A wildcard covers one label only, and no ingress host it covers: no public URL at all.
    expect(await publicUrl({ 'ingress.hosts[0].host': 'a.b.example.com', 'ingress.tls[0].secretName': 'wild', 'ingress.tls[0].hosts[0]': '*.example.com' })).toBeUndefined();
    expect(await publicUrl({ 'ingress.hosts[0].host': 'cairn.other.org', 'ingress.tls[0].secretName': 'wild', 'ingress.tls[0].hosts[0]': '*.example.com' })).toBeUndefined();
    // And whatever it sets, the server accepts as its CAIRN_PUBLIC_URL.
    expect(parseConfig({ CAIRN_PUBLIC_URL: 'https://cairn.example.com' }).publicUrl).toBe('https://cairn.example.com');
    expect(() => parseConfig({ CAIRN_PUBLIC_URL: 'https://*.example.com' })).toThrow(/CAIRN_PUBLIC_URL: expected one host, not a wildcard/);
  });

  it.each(['pa ss/w+rd', 'p@ss#w?rd:%20=&', 'plain'])('percent-encodes the built-in database password %j in the DSN', async (password) => {
    const objects = await render({ 'postgres.password': password });
    expect(find(objects, 'Secret', 'rel-cairn-postgres').stringData?.password).toBe(password);
    const dsn = find(objects, 'Secret', 'rel-cairn').stringData?.CAIRN_DB_DSN as string;
    expect(parseConfig({ CAIRN_DB_DSN: dsn }).storage).toMatchObject({ backend: 'postgres', dsn });
    // What the PostgreSQL client would send (it connects lazily: nothing is opened).
    const sql = createClient({ dsn, logger: pino({ level: 'silent' }), max: 1, connectTimeoutS: 1, statementTimeoutMs: 1000 });
    expect(sql.options.pass).toBe(password);
    expect(sql.options.user).toBe('cairn');
    expect(sql.options.host).toEqual(['rel-cairn-postgres']);
  });
});
