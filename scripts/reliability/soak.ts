import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SECRET, payloads } from '../../bench/webhooks.ts';
import { searchQueries } from '../../bench/lib/search-corpus.ts';
import { spawnCairn } from '../../test/helpers/spawn-cairn.ts';
import type { SoakFigures, SoakMinute } from './types.ts';

type Kind = 'write' | 'read' | 'search' | 'webhook';
const KINDS: Kind[] = ['write', 'read', 'search', 'webhook'];
const TICK_MS = 20;
const TIMEOUT_MS = 10_000;

/** Per second: a steady mix a small team's agents might keep up all day, well under the peak figures. */
export const SOAK_RATES: Record<Kind, number> = { write: 100, read: 200, search: 20, webhook: 20 };

const p99 = (xs: number[]): number => {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0) * 10) / 10;
};

const rssMiB = async (pid: number): Promise<number> => Math.round(Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

/**
 * A steady open-loop mixed load (writes, reads of written keys, searches, signed GitHub
 * webhooks) on one filesystem server for `minutes`: requests go out on a fixed schedule
 * whatever the answers' speed, so a slowdown shows as latency, not as less load. p99 per
 * minute per kind, RSS per minute, and at the end every acknowledged write read back.
 */
export const soak = async (minutes: number, onMinute: (m: SoakMinute) => void = () => {}): Promise<SoakFigures> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-soak-'));
  const server = await spawnCairn({ CAIRN_DATA_DIR: dir, CAIRN_RATE_LIMIT_RPM: '0', CAIRN_CONNECTOR_GITHUB_SECRET: SECRET });
  const pid = server.child.pid as number;
  const hooks = payloads().map((body) => ({ body, signature: `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` }));
  const queries = searchQueries();
  const acked: Array<{ key: string; seq: number }> = [];
  let current: Record<Kind, number[]> = { write: [], read: [], search: [], webhook: [] };
  let requests = 0;
  let errors = 0;
  const errorSamples: string[] = [];
  const counters: Record<Kind, number> = { write: 0, read: 0, search: 0, webhook: 0 };
  const inflight = new Set<Promise<void>>();

  const send = (kind: Kind): void => {
    const n = counters[kind]++;
    let init: RequestInit & { path: string };
    if (kind === 'write') init = { path: '/api/v1/entries', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ entity_path: `soak/p${n % 100}`, key: `k${n}`, value: { seq: n, text: `soak write ${n}`, pad: 'x'.repeat(512) } }) };
    else if (kind === 'read') {
      const target = acked.length ? acked[Math.floor(Math.random() * acked.length)] : undefined;
      init = { path: target ? `/api/v1/entries/soak/p${target.seq % 100}/${target.key}` : '/api/v1/entries?entity_path=soak&limit=10', method: 'GET' };
    } else if (kind === 'search') init = { path: '/api/v1/search', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: queries[n % queries.length], limit: 10 }) };
    else {
      const hook = hooks[n % hooks.length] as { body: string; signature: string };
      init = { path: '/api/v1/webhooks/github', method: 'POST', body: hook.body, headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': `soak-${n}`, 'x-hub-signature-256': hook.signature } };
    }
    const bucket = current;
    const started = performance.now();
    const p = (async () => {
      try {
        const res = await fetch(server.url + init.path, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
        await res.arrayBuffer();
        if (res.status >= 300) throw new Error(`${kind} answered ${res.status}`);
        if (kind === 'write') acked.push({ key: `k${n}`, seq: n });
      } catch (e) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(String(e));
      } finally {
        bucket[kind].push(performance.now() - started);
        requests++;
      }
    })();
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  };

  const perMinute: SoakMinute[] = [];
  const closeMinute = async (): Promise<void> => {
    const bucket = current;
    current = { write: [], read: [], search: [], webhook: [] };
    const m: SoakMinute = {
      minute: perMinute.length + 1,
      requests: KINDS.reduce((a, k) => a + bucket[k].length, 0),
      errors,
      p99_ms: { write: p99(bucket.write), read: p99(bucket.read), search: p99(bucket.search), webhook: p99(bucket.webhook) },
      rss_mib: await rssMiB(pid),
    };
    perMinute.push(m);
    onMinute(m);
  };
  try {
    const start = performance.now();
    const owed: Record<Kind, number> = { write: 0, read: 0, search: 0, webhook: 0 };
    let minuteStart = start;
    let last = start;
    while (performance.now() - start < minutes * 60_000) {
      await new Promise((r) => setTimeout(r, TICK_MS));
      const now = performance.now();
      for (const kind of KINDS) {
        owed[kind] += (SOAK_RATES[kind] * (now - last)) / 1000;
        for (; owed[kind] >= 1; owed[kind]--) send(kind);
      }
      last = now;
      if (now - minuteStart >= 60_000) {
        await closeMinute();
        minuteStart = now;
      }
    }
    await Promise.all(inflight);
    // The last minute ends with the run, not on a tick: record it too.
    if (KINDS.some((k) => current[k].length > 0)) await closeMinute();

    // Every acknowledged write reads back with its value.
    let lost = 0;
    let next = 0;
    const lostSamples: string[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = next++; i < acked.length; i = next++) {
          const a = acked[i] as { key: string; seq: number };
          const res = await fetch(`${server.url}/api/v1/entries/soak/p${a.seq % 100}/${a.key}`);
          const body = (await res.json()) as { value?: { seq?: number } };
          if (res.status !== 200 || body.value?.seq !== a.seq) {
            lost++;
            if (lostSamples.length < 5) lostSamples.push(`${a.key}: ${res.status}`);
          }
        }
      }),
    );
    if (errorSamples.length) console.log(`  soak: first errors: ${errorSamples.join('; ')}`);
    if (lostSamples.length) console.log(`  soak: first lost writes: ${lostSamples.join('; ')}`);
    return {
      minutes,
      rates: SOAK_RATES,
      per_minute: perMinute,
      rss_first_minute_mib: perMinute[0]?.rss_mib ?? (await rssMiB(pid)),
      rss_last_minute_mib: perMinute.at(-1)?.rss_mib ?? (await rssMiB(pid)),
      acknowledged_writes: acked.length,
      lost_writes: lost,
      errors,
    };
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
};
