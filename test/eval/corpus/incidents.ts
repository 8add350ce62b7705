import { type EvalEntry, type EvalQuery, type QueryKind, type Topic, pairs, pick } from './model.ts';

type Cause = Topic & { fix: string };

const CAUSES: Cause[] = [
  { doc: 'connection pool exhausted on the primary Postgres database', words: 'connection pool exhausted postgres', para: 'it ran out of db connections', fix: 'raised max_connections and added PgBouncer in transaction mode' },
  { doc: 'TLS certificate expired on the public load balancer', words: 'tls certificate expired', para: 'the https cert lapsed at the ingress', fix: 'renewed the certificate and added expiry alerting at 21 days' },
  { doc: 'memory leak caused pods to be OOMKilled repeatedly', words: 'memory leak oomkilled pods', para: 'containers kept dying from running out of ram', fix: 'patched the leaking buffer cache and set a heap limit' },
  { doc: 'disk full on a Kafka broker stopped partition replication', words: 'kafka broker disk full', para: 'a message queue node had no storage space left', fix: 'expanded volumes and shortened topic retention' },
  { doc: 'DNS resolution failures after a resolver configuration change', words: 'dns resolution failures resolver', para: 'hostname lookups broke after someone edited name server settings', fix: 'reverted the resolv.conf template' },
  { doc: 'feature flag rollout enabled the new pricing path for all users at once', words: 'feature flag pricing rollout', para: 'a toggle switched the new price logic on for everyone by mistake', fix: 'turned the flag off and added percentage rollout guardrails' },
  { doc: 'Redis cache eviction storm after maxmemory was lowered', words: 'redis eviction maxmemory', para: 'the in-memory store started dropping keys en masse once its limit was reduced', fix: 'restored maxmemory and moved sessions to a dedicated instance' },
  { doc: 'retry storm from clients amplified a partial outage', words: 'retry storm clients', para: 'callers hammering again and again turned a small failure into a big one', fix: 'added jittered backoff and a circuit breaker in the client library' },
  { doc: 'expired OAuth client secret broke token refresh', words: 'oauth client secret token refresh', para: 'the app credential for sign-in lapsed so sessions could not renew', fix: 'rotated the secret and moved it to the vault with expiry reminders' },
  { doc: 'slow query without an index on the orders table caused request timeouts', words: 'slow query missing index orders timeouts', para: 'an unindexed lookup on purchase records made calls hang', fix: 'added a composite index on (customer_id, created_at)' },
  { doc: 'third-party payment provider outage returned 502 errors', words: 'payment provider outage 502', para: 'the external card processor was down', fix: 'failed over to the secondary acquirer' },
  { doc: 'rate limiting misconfiguration throttled legitimate traffic', words: 'rate limiting misconfiguration throttled', para: 'request caps were set wrong and blocked real customers', fix: 'corrected the per-tenant quota and added a canary for limit changes' },
  { doc: 'clock skew on nodes invalidated signed JWT tokens', words: 'clock skew jwt tokens', para: 'server time drift made auth signatures look invalid', fix: 'enabled chrony on the node image and allowed 30 seconds of leeway' },
  { doc: 'schema migration locked the accounts table during deployment', words: 'schema migration locked table', para: 'a release ran a db change that froze writes', fix: 'rewrote the migration to build the index concurrently' },
  { doc: 'CPU saturation from a catastrophic backtracking regex on user input', words: 'cpu saturation regex backtracking', para: 'the processor maxed out because of a pathological pattern match on what users typed', fix: 'replaced the regex with a linear parser and capped input length' },
  { doc: 'network partition between availability zones', words: 'network partition availability zones', para: 'the data centers in one region could not reach each other', fix: 'the cloud provider repaired the link; we added zone-aware routing' },
  { doc: 'S3 bucket policy change denied reads from the CDN', words: 's3 bucket policy cdn denied', para: 'an object storage permissions edit blocked the content edge', fix: 'restored the origin access identity grant' },
  { doc: 'thread pool starvation from blocking calls on the event loop', words: 'thread pool starvation blocking event loop', para: 'workers were stuck waiting on synchronous io', fix: 'moved file access to the worker pool and added event loop lag alerts' },
  { doc: 'consumer lag on the order events topic grew to three hours', words: 'consumer lag order events topic', para: 'queue processing fell hours behind', fix: 'scaled consumers to 24 partitions and fixed a poison message' },
  { doc: 'cluster autoscaler could not add nodes because the subnet ran out of IP addresses', words: 'autoscaler subnet ip addresses', para: 'the cluster could not grow since the network had no free addresses', fix: 'added a secondary CIDR range to the VPC' },
  { doc: 'stale cache served outdated prices after an invalidation bug', words: 'stale cache invalidation outdated prices', para: 'old values kept showing because purging did not work', fix: 'fixed the cache key version bump on product updates' },
  { doc: 'cron job ran twice after the daylight saving time change', words: 'cron daylight saving ran twice', para: 'a scheduled task fired two times when the clocks shifted', fix: 'switched schedules to UTC and made the job idempotent' },
  { doc: 'log volume spike filled the disk on the logging pipeline', words: 'log volume spike disk logging', para: 'far too many debug lines ate all the storage', fix: 'dropped debug level in production and added per-service log quotas' },
  { doc: 'webhook signing secret rotated without updating consumers', words: 'webhook signing secret rotated', para: 'the shared key for callbacks changed but receivers kept the old one', fix: 'supported two active secrets during rotation' },
  { doc: 'load balancer health checks pointed at the wrong port', words: 'health checks wrong port', para: 'probes were checking an incorrect socket so instances got pulled out', fix: 'corrected the target group port and added a config test' },
  { doc: 'dependency upgrade introduced a serialization bug in JSON responses', words: 'dependency upgrade serialization json', para: 'a library bump broke how payloads were encoded', fix: 'pinned the previous version and added contract tests' },
  { doc: 'garbage collection pauses caused p99 latency spikes', words: 'garbage collection pauses p99 latency', para: 'runtime memory cleanup stalls made the slowest requests much slower', fix: 'tuned the heap and switched to the low-pause collector' },
  { doc: 'domain registration for the status page expired', words: 'domain registration expired status page', para: 'nobody renewed the web address of the uptime site', fix: 'enabled auto-renew and moved the domain to the company registrar account' },
  { doc: 'misconfigured CORS headers blocked browser requests', words: 'cors headers blocked browser', para: 'cross-origin settings were wrong so the web app calls were refused', fix: 'restored the allowed origins list' },
  { doc: 'kernel upgrade broke the storage driver on worker nodes', words: 'kernel upgrade storage driver', para: 'an os patch made the disk plugin on hosts fail', fix: 'rolled the node image back and pinned the kernel' },
];

const SYMPTOMS = ['elevated 5xx errors', 'high latency', 'full outage', 'degraded performance', 'failed requests'];
const PARA_FORMS = [
  (svc: string, p: string) => `when ${svc} broke because ${p}`,
  (svc: string, p: string) => `${svc} went down after ${p}`,
  (svc: string, p: string) => `the time ${p} and it hit ${svc}`,
  (svc: string, p: string) => `${svc} problem where ${p}`,
];

export const incidents = (rand: () => number): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const entries: EvalEntry[] = [];
  const queries: EvalQuery[] = [];
  pairs(rand, CAUSES, 100).forEach(({ service, topic }, i) => {
    const symptom = pick(rand, SYMPTOMS);
    const key = `incident-${4100 + i}`;
    const path = `incidents/pagerduty/${service.id}`;
    entries.push({
      entity_path: path,
      key,
      event_type: 'incident.resolved',
      agent_id: 'external/pagerduty',
      value: {
        title: `${service.id}: ${symptom}`,
        service: service.id,
        urgency: pick(rand, ['high', 'low']),
        priority: pick(rand, ['P1', 'P2', 'P3']),
        status: 'resolved',
        summary: `${symptom[0]?.toUpperCase()}${symptom.slice(1)} on ${service.id}, caused by ${topic.doc}.`,
        resolution: `Mitigated: ${topic.fix}.`,
        duration_minutes: 10 + Math.floor(rand() * 230),
      },
    });
    if (i % 3 !== 0 || queries.length >= 33) return;
    const kind: QueryKind = (['lexical', 'keyword', 'paraphrase'] as const)[queries.length % 3] as QueryKind;
    const query =
      kind === 'lexical' ? `${service.id} incident ${topic.doc}` : kind === 'keyword' ? `${service.spoken} ${topic.words}` : (PARA_FORMS[queries.length % PARA_FORMS.length] as (s: string, p: string) => string)(service.spoken, topic.para);
    queries.push({ query, kind, expected: [`${path}/${key}`] });
  });
  return { entries, queries };
};
