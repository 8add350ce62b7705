// Run as `node bench/lib/write-timeline.ts <url> <seconds> <connections>`: writes new entries
// over keep-alive connections from the moment it starts, and prints one JSON line: how many
// completed in the first second, the slowest, and the quantiles over the whole run. The bench
// starts it as a server begins to listen after a restart: wrk reports no figure by time.
import { Agent, request } from 'node:http';
import { quantile } from './quantile.ts';

const [url = '', seconds = '10', connections = '50'] = process.argv.slice(2);
const target = new URL(url);
const agent = new Agent({ keepAlive: true, maxSockets: Number(connections) });
const started = performance.now();
const until = started + Number(seconds) * 1000;
/** [completed at (ms from start), latency (ms)] per write answered 2xx. */
const done: Array<[number, number]> = [];
let failed = 0;
let n = 0;

const post = (body: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, path: '/api/v1/entries', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });

const writer = async (): Promise<void> => {
  while (performance.now() < until) {
    const i = n++;
    const body = JSON.stringify({ entity_path: `bench/restart/w${i % 4096}`, key: `k${process.pid}-${i}`, value: `written while the server starts: deploy ${i} of the canary rollout` });
    const sent = performance.now();
    const status = await post(body).catch(() => 0);
    const now = performance.now();
    if (status >= 200 && status < 300) done.push([now - started, now - sent]);
    else failed += 1;
  }
};

await Promise.all(Array.from({ length: Number(connections) }, writer));
agent.destroy();
const latencies = done.map(([, ms]) => ms).sort((a, b) => a - b);
const round = (ms: number): number => Math.round(ms * 10) / 10;
console.log(
  JSON.stringify({
    writes: done.length,
    failed,
    first_second_writes: done.filter(([at]) => at < 1_000).length,
    slowest_ms: round(latencies.at(-1) ?? 0),
    p99_ms: round(quantile(latencies, 0.99)),
    p999_ms: round(quantile(latencies, 0.999)),
  }),
);
