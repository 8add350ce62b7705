import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { CompileInterrupted, Compiler } from '../../packages/server/src/cortex/compiler.ts';
import { CompileLoop } from '../../packages/server/src/cortex/compile-loop.ts';
import { COLLECTIONS, CortexRecords } from '../../packages/server/src/cortex/cortex-records.ts';
import { purgeQuoting } from '../../packages/server/src/cortex/forget-purge.ts';
import { KeyHistory } from '../../packages/server/src/cortex/key-history.ts';
import { READY } from '../../packages/server/src/cortex/trace-paths.ts';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';
import type { ForgetTarget } from '../../packages/server/src/domain/forget-target.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { writeKnownLink } from '../../packages/server/src/services/write-known-link.ts';
import { openFromEnv } from '../helpers/archive-fixture.ts';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

/**
 * A forget compiles again only what it reached (Compiler.forget, compileForgotten), with the
 * very records the full rebuild it replaces wrote: for random stores and random targets (a
 * key, a path, a prefix, two at once), every digest, pattern, trace, trace index link and
 * entry (the links the Cortex writes onto entries) is compared after each way. Both run at
 * one fixed clock, from a Cortex caught up with its entries; only the trace index's ready
 * mark differs (it holds the time it was written).
 */
const NS = 'ns';
const T0 = Date.parse('2026-11-23T08:00:00.000Z');
const HOUR = 3_600_000;
const NOW = T0 + 49 * HOUR;
const iso = (ms: number): string => new Date(ms).toISOString();


const NAMES = ['api', 'API-service', 'api-svc', 'web', 'websvc', 'db', 'queue', 'auth'];

/**
 * Random entries (each a list of versions of one key): incidents, deploys and CI runs, chat,
 * projects, notes with fights and links. Incident ids repeat across incident paths unless
 * `unique` (then a thread that names one links to it whatever order the digests are held in).
 */
const randomStore = (seed: number, paths: number, unique = false): Entry[][] => {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const at = () => T0 + Math.floor(r() * 48) * (HOUR / 2);
  let seq = 0;
  /** An id a message names: of an incident of any path when ids are unique. */
  const token = (): string => (unique ? `PD1${Math.floor(r() * 8)}${Math.floor(r() * 8)}` : `PD10${Math.floor(r() * 8)}`);
  const entry = (entity_path: string, key: string, value: EntryValue, t: number, agent_id = 'external/test', extra: Partial<Entry> = {}): Entry => ({
    namespace: NS, entity_path, key, value, version: 1, confidence: 0.9, agent_id, event_type: null,
    memory_type: 'event', shared: true, tags: [], provenance: {}, content_hash: contentHash(value),
    created_at: iso(t), written_at: iso(Math.min(t, NOW - 10 * HOUR) + ++seq), expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [], ...extra,
  });
  const keys = new Map<string, Entry[]>();
  const put = (e: Entry): void => {
    const id = `${e.entity_path}\u0000${e.key}`;
    const versions = keys.get(id) ?? [];
    keys.set(id, [...versions, { ...e, version: versions.length + 1, created_at: versions[0]?.created_at ?? e.created_at }]);
  };
  for (let p = 0; p < paths; p++) {
    const kind = r();
    const n = 1 + Math.floor(r() * 4);
    if (kind < 0.25) {
      const path = `incidents/pd/${pick(NAMES)}`;
      for (let k = 0; k < n; k++) {
        const t = at();
        const status = pick(['triggered', 'acknowledged', 'resolved']);
        const id = unique ? `PD1${NAMES.indexOf(path.slice('incidents/pd/'.length))}${Math.floor(r() * 8)}` : `PD10${Math.floor(r() * 8)}`;
        put(entry(path, `incident-${id}`, { id, title: `down ${pick(['a', 'b'])}`, status, service: { name: pick(NAMES) }, assignees: [pick(['ann', 'bob'])], triggered_at: iso(t), resolved_at: status === 'resolved' ? iso(t + HOUR) : null }, t, 'external/pagerduty'));
      }
    } else if (kind < 0.5) {
      const path = `repos/${pick(['acme', 'org'])}/${pick(NAMES)}`;
      for (let k = 0; k < n; k++) {
        const t = at();
        const i = Math.floor(r() * 6);
        put(r() < 0.6
          ? entry(path, `deployment-${i}`, { id: i, environment: pick(['production', 'staging']), state: pick(['failure', 'success', 'error']), sha: `${i}abc`, created_at: iso(t - 60_000), updated_at: iso(t) }, t, 'external/github')
          : entry(path, `run-${i}`, { kind: 'workflow_run', name: 'ci', conclusion: pick(['failure', 'success']), branch: 'main', on_default_branch: true, commit: { sha: `${i}abc` }, completed_at: iso(t) }, t, 'external/github'));
      }
    } else if (kind < 0.7) {
      const path = `comms/slack/${pick(['C1', 'C2', 'C3', 'C4'])}`;
      for (let k = 0; k < n; k++) {
        const i = Math.floor(r() * 8);
        const t = at();
        put(r() < 0.4
          ? entry(path, `msg-${i}.0`, { text: `is ${token()} still open?`, user: pick(['U1', 'U2']), ts: `${i}.0`, posted_at: iso(t) }, t, 'external/slack')
          : entry(path, `thread-${i}.0`, { thread_ts: `${i}.0`, started_at: iso(t), last_reply_at: iso(t + 60_000), reply_count: 1, participants: ['U1'], replies: [{ user: 'U2', text: `${token()} and ${token()} again` }] }, t, 'external/slack'));
      }
    } else if (kind < 0.78) {
      const path = `projects/jira/${pick(['P1', 'P2'])}`;
      for (let k = 0; k < n; k++) put(entry(path, `issue-${Math.floor(r() * 5)}`, { summary: `issue ${k}`, status: pick(['To Do', 'In Progress', 'Done']) }, at(), 'external/jira'));
    } else {
      const path = `${pick(['agents/a/notes', 'agents/b/notes', 'people', 'people/al'])}/${pick(['n1', 'n2', 'n3', 'alice'])}`;
      for (let k = 0; k < n; k++) {
        const key = `k${Math.floor(r() * 3)}`;
        const links = r() < 0.3 ? [{ relation: 'relates_to', entity_path: pick(['incidents/pd/api', 'people/n1']), key: pick(['incident-PD101', 'k0']) }] : [];
        put(entry(path, key, { summary: `note ${Math.floor(r() * 3)}` }, at(), pick(['agent-1', 'agent-2']), { confidence: pick([0.9, 0.6, 0.3]), links } as Partial<Entry>));
      }
    }
  }
  return [...keys.values()];
};

const fill = async (store: Store, keys: Entry[][]): Promise<void> => {
  for (const versions of keys) for (const e of versions) await store.append(e, e.version - 1);
};

/** A random target among what the store holds: a key, a path, a prefix (sometimes naming nothing). */
const randomTarget = (r: () => number, keys: Entry[][]): ForgetTarget => {
  const e = (keys[Math.floor(r() * keys.length)] as Entry[])[0] as Entry;
  const x = r();
  if (x < 0.5) return { namespace: NS, prefix: e.entity_path, key: e.key };
  if (x < 0.75) return { namespace: NS, prefix: e.entity_path };
  if (x < 0.95) return { namespace: NS, prefix: e.entity_path.split('/').slice(0, 1 + Math.floor(r() * 2)).join('/') };
  return { namespace: NS, prefix: 'people/al' };
};

const compilerOf = (store: Store): { compiler: Compiler; events: unknown[] } => {
  const events: unknown[] = [];
  const compiler = new Compiler({
    store, records: new CortexRecords(store), history: new KeyHistory(store), now: () => NOW,
    publish: (e) => events.push(e), writeLink: (ns, known) => writeKnownLink({ store, now: () => NOW }, ns, known),
  });
  return { compiler, events };
};

/**
 * Catch up until a catch-up changes nothing (the links it writes are versions of entries,
 * compiled by the next), each from the records: PostgreSQL gives a digest's objects back with
 * their keys in its own order (jsonb), and a roll-up lists a status count in the order of
 * those keys, so the first reload may rewrite roll-ups however they were reached.
 */
const caughtUp = async (compiler: Compiler, events: unknown[]): Promise<void> => {
  for (let i = 0; i < 8; i++) {
    events.length = 0;
    compiler.reset();
    await compiler.compileNamespace(NS);
    if (events.length === 0) return;
  }
  throw new Error('the catch-up does not settle');
};

/** Every Cortex record of the namespace and every entry (with the links the Cortex wrote). */
const dump = async (store: Store): Promise<unknown> => {
  const out: Record<string, unknown> = {};
  for (const c of [COLLECTIONS.digests(NS), COLLECTIONS.patterns(NS), COLLECTIONS.traces(NS), COLLECTIONS.tracePaths(NS)]) {
    const rows: unknown[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.listRecords(c, { limit: 500, ...(after === undefined ? {} : { after }) });
      for (const rec of page) rows.push([rec.id, rec.id === READY ? 'ready' : rec.data]);
      if (page.length < 500) break;
      after = page.at(-1)?.id;
    }
    out[c] = rows;
  }
  const entries: Entry[] = [];
  let after: Parameters<Store['list']>[0]['after'];
  for (;;) {
    const page = await store.list({ namespace: NS, limit: 1000, now: NOW, ...(after ? { after } : {}) });
    entries.push(...page.entries);
    if (!page.next) break;
    after = page.next;
  }
  out.entries = entries;
  return out;
};

/**
 * The old way (drop the state, rebuild), the old way one forget after the other, the new, or
 * the new with the first forget's compile stopped by the next forget after `stopAfter` checks.
 */
const withoutRollups = (d: unknown): unknown => {
  const out = { ...(d as Record<string, unknown>) };
  const key = COLLECTIONS.digests(NS);
  out[key] = (out[key] as Array<[string, { kind: string }]>).map(([id, digest]) => (digest.kind === 'path' ? [id, digest] : [id, digest.kind]));
  return out;
};

type Way = 'full' | 'full-each' | 'scoped' | { stopAfter: number };

/** One store caught up, then forgotten at `targets` the old way (drop the state, rebuild) or the new. */
const run = async (open: () => Promise<{ store: Store; close: () => Promise<void> }>, keys: Entry[][], targets: ForgetTarget[], way: Way): Promise<{ dump: unknown; compiled: number; stopped: boolean }> => {
  const { store, close } = await open();
  try {
    await fill(store, keys);
    const { compiler, events } = compilerOf(store);
    await caughtUp(compiler, events);
    // The API: the forget, and its purge (forget-entries.ts); then the worker's forget, its
    // purge and its compile. One after the other, each forget is made as the worker takes it.
    const api = async (t: ForgetTarget): Promise<void> => {
      await store.forget(t);
      await purgeQuoting(store, t);
    };
    const each = typeof way === 'object' || way === 'full-each';
    if (!each) for (const t of targets) await api(t);
    const before = compiler.compiled;
    let stopped = false;
    const kept = each ? [] : targets.map((t) => compiler.forget(t));
    if (!each) for (const t of targets) await purgeQuoting(store, t);
    if (way === 'full-each') {
      for (const t of targets) {
        await api(t);
        compiler.forget(t);
        compiler.reset();
        await purgeQuoting(store, t);
        await compiler.compileNamespace(NS);
      }
    } else if (way === 'full') {
      compiler.reset();
      await compiler.compileNamespace(NS);
    } else if (typeof way === 'object') {
      // The worker's applyForgets: the first forget, its compile stopped by the next forget.
      const [first, ...next] = targets as [ForgetTarget, ...ForgetTarget[]];
      await api(first);
      let rebuild = !compiler.forget(first);
      await purgeQuoting(store, first);
      let checks = 0;
      if (!rebuild) await compiler.compileForgotten(NS, () => checks++ >= way.stopAfter).catch((error: unknown) => {
        if (!(error instanceof CompileInterrupted)) throw error;
        stopped = true;
      });
      for (const t of next) await api(t);
      for (const t of next) rebuild = !compiler.forget(t) || rebuild;
      for (const t of next) await purgeQuoting(store, t);
      if (rebuild || !(await compiler.compileForgotten(NS))) await compiler.compileNamespace(NS);
    } else {
      expect(kept).toEqual(targets.map(() => true));
      expect(await compiler.compileForgotten(NS)).toBe(true);
    }
    return { dump: await dump(store), compiled: compiler.compiled - before, stopped };
  } finally {
    await close();
  }
};

const oracle = async (backend: BackendEnv, seeds: number[], paths: number): Promise<void> => {
  const compiled = { full: 0, scoped: 0 };
  let stops = 0;
  const open = async () => {
    const b = await openFromEnv(await backend.env());
    return { store: b.store, close: () => b.store.close() };
  };
  for (const seed of seeds) {
    const r = seededRandom(seed * 7 + 1);
    // A compile interrupted by the next forget, then compiled whole: the records it wrote are
    // reloaded in their place, where the rebuild appends what it writes, so which of two
    // incidents with one id a thread links to would tell the ways apart: ids are unique then.
    const interrupted = r() < 0.25;
    const keys = randomStore(seed, paths, interrupted);
    const targets = [randomTarget(r, keys), ...(interrupted || r() < 0.2 ? [randomTarget(r, keys)] : [])];
    const scoped = await run(open, keys, targets, interrupted ? { stopAfter: Math.floor(r() * 6) } : 'scoped');
    // Not stopped, the first forget's compile ran to its end before the next: rebuilt after each then.
    const full = await run(open, keys, targets, interrupted && !scoped.stopped ? 'full-each' : 'full');
    stops += scoped.stopped ? 1 : 0;
    // Stopped, the compile may have written digests the rebuild then reloads in record order,
    // where an uninterrupted rebuild appends them: a roll-up joins its paths in that order (so
    // does today's rebuild after any interrupted compile). Roll-ups are compared by scope then.
    const same = scoped.stopped ? withoutRollups : (d: unknown) => d;
    expect(same(scoped.dump), `seed ${seed}, targets ${JSON.stringify(targets)}`).toEqual(same(full.dump));
    compiled.full += full.compiled;
    compiled.scoped += scoped.compiled;
  }
  // And it compiled much less than the rebuilds did.
  expect(compiled.scoped * 3).toBeLessThan(compiled.full);
  if (seeds.length >= 20) expect(stops).toBeGreaterThan(0);
};

describe('a forget compiled where it reached writes what the full rebuild writes', () => {
  const fs = filesystemBackend('forget-scoped');
  const pg = postgresBackend('forget_scoped');
  const s3 = s3Backend('forget-scoped');
  afterAll(async () => {
    await fs.cleanup();
    await pg.cleanup();
    await s3.cleanup();
  });

  it('on the filesystem, for many random stores and targets', async () => {
    await oracle(fs, Array.from({ length: 30 }, (_, i) => i + 1), 40);
  }, 600_000);

  it('on PostgreSQL, for a few', async () => {
    await oracle(pg, [101, 102, 103, 104, 105], 30);
  }, 300_000);

  it('on S3, for a few', async () => {
    await oracle(s3, [201, 202, 203, 204], 30);
  }, 300_000);
});
