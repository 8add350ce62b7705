import { type EvalEntry, type EvalQuery, type QueryKind, type Topic, pairs } from './model.ts';

type Procedure = Topic & { slug: string; steps: string };

const PROCEDURES: Procedure[] = [
  { slug: 'rotate-tls-certificate', doc: 'Rotate the TLS certificate', words: 'rotate tls certificate', para: 'swap in a fresh https cert', steps: 'Request a new certificate from the ACME issuer, upload it to the secret store, reload the listeners and verify the chain with openssl s_client.' },
  { slug: 'restore-from-backup', doc: 'Restore the database from a point-in-time backup', words: 'restore database point-in-time backup', para: 'bring the db back to how it was at an earlier moment', steps: 'Pick the recovery target time, create a new instance from the snapshot plus WAL, run the consistency checks, then switch the connection string.' },
  { slug: 'scale-out', doc: 'Scale out the service horizontally', words: 'scale out horizontally', para: 'add more copies of it to handle load', steps: 'Raise the replica count in the HPA, confirm the new pods pass readiness, and watch CPU per pod settle under 60 percent.' },
  { slug: 'drain-node', doc: 'Drain a Kubernetes node for maintenance', words: 'drain kubernetes node maintenance', para: 'move workloads off a machine before patching it', steps: 'Cordon the node, run kubectl drain with ignore-daemonsets, wait for pods to reschedule, patch, then uncordon.' },
  { slug: 'flush-cache', doc: 'Flush the Redis cache safely', words: 'flush redis cache', para: 'empty the in-memory store without taking the site down', steps: 'Enable request coalescing, flush keys by prefix in batches of 1000, and monitor the database load while the cache warms.' },
  { slug: 'replay-dead-letters', doc: 'Replay messages from the dead letter queue', words: 'replay dead letter queue', para: 'reprocess the events that previously failed', steps: 'Inspect a sample for poison payloads, fix the consumer, then move messages back to the main topic at 100 per second.' },
  { slug: 'rollback-release', doc: 'Roll back a bad release', words: 'roll back release', para: 'undo the version we just shipped', steps: 'Find the previous good image tag, run the deploy pipeline with it, and confirm error rates recover on the dashboard.' },
  { slug: 'rotate-api-keys', doc: 'Rotate leaked API keys', words: 'rotate leaked api keys', para: 'replace credentials that got exposed', steps: 'Issue new keys, update the consumers, revoke the old keys, and search the logs for use of the leaked ones.' },
  { slug: 'increase-disk', doc: 'Increase the disk size of a stateful volume', words: 'increase disk size volume', para: 'give a database pod more storage room', steps: 'Resize the persistent volume claim, wait for the file system expansion, and verify free space with df.' },
  { slug: 'failover-database', doc: 'Fail over the database to the standby replica', words: 'fail over database standby replica', para: 'promote the backup copy of the db to be the main one', steps: 'Stop writes, confirm replication lag is zero, promote the standby, and repoint the application DNS record.' },
  { slug: 'reindex-search', doc: 'Rebuild the search index', words: 'rebuild search index', para: 'regenerate what the lookup engine uses to find documents', steps: 'Create a new index with the current mapping, backfill from the primary store, then swap the alias atomically.' },
  { slug: 'block-abusive-ip', doc: 'Block an abusive IP range at the edge', words: 'block abusive ip range edge', para: 'stop a hostile network from reaching us at the perimeter', steps: 'Add the CIDR to the WAF deny list, confirm the block in edge logs, and set an expiry of seven days.' },
  { slug: 'purge-cdn', doc: 'Purge stale assets from the CDN', words: 'purge stale assets cdn', para: 'clear old static files out of the content network', steps: 'Purge by surrogate key for the release, check a few asset URLs for the new hash, and avoid full purges at peak.' },
  { slug: 'debug-memory', doc: 'Capture a heap snapshot to debug memory growth', words: 'heap snapshot memory growth', para: 'figure out why a process keeps getting bigger', steps: 'Attach the inspector to one pod, take two heap snapshots ten minutes apart and compare retained sizes.' },
  { slug: 'handle-pager-storm', doc: 'Handle an alert storm during an incident', words: 'alert storm incident', para: 'deal with a flood of pages going off at once', steps: 'Declare an incident, silence duplicates by service, assign a comms lead, and keep one alert per symptom.' },
  { slug: 'renew-domain', doc: 'Renew a domain and check DNS records', words: 'renew domain dns records', para: 'keep our web address from lapsing', steps: 'Renew at the registrar for two years, verify the nameservers, and check the SOA serial.' },
  { slug: 'unstick-migration', doc: 'Recover from a stuck schema migration', words: 'stuck schema migration recover', para: 'fix a database change that hangs half-way', steps: 'Find the blocking session in pg_stat_activity, cancel it, mark the migration as failed and rerun it in a low traffic window.' },
  { slug: 'throttle-tenant', doc: 'Throttle a noisy tenant', words: 'throttle noisy tenant', para: 'slow down one customer who is overloading shared resources', steps: 'Lower the tenant quota in the limits service, notify the account manager, and review after 24 hours.' },
  { slug: 'restart-consumers', doc: 'Restart the stream consumers without losing offsets', words: 'restart consumers offsets', para: 'bounce the event readers and keep their position', steps: 'Pause consumption, commit offsets, roll the deployment, and verify lag decreases after resume.' },
  { slug: 'investigate-latency', doc: 'Investigate a latency regression', words: 'investigate latency regression', para: 'find out why requests got slower', steps: 'Compare traces before and after the change, check the database slow log, and bisect recent deploys.' },
];

export const runbooks = (rand: () => number): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const entries: EvalEntry[] = [];
  const queries: EvalQuery[] = [];
  pairs(rand, PROCEDURES, 45).forEach(({ service, topic }, i) => {
    const path = `runbooks/${service.id}`;
    entries.push({
      entity_path: path,
      key: topic.slug,
      memory_type: 'procedure',
      tags: ['runbook', service.id],
      value: `# Runbook: ${topic.doc} (${service.id})\n\nWhen: on-call needs to do this for ${service.id}.\n\nSteps: ${topic.steps}\n\nOwner: platform team.`,
    });
    if (i % 2 !== 0 || queries.length >= 22) return;
    const kind: QueryKind = (['paraphrase', 'keyword', 'lexical'] as const)[queries.length % 3] as QueryKind;
    const query = kind === 'lexical' ? `runbook ${topic.doc} ${service.id}` : kind === 'keyword' ? `${service.spoken} ${topic.words}` : `how do I ${topic.para} for ${service.spoken}`;
    queries.push({ query, kind, expected: [`${path}/${topic.slug}`] });
  });
  return { entries, queries };
};
