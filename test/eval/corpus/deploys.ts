import { type EvalEntry, type EvalQuery, PEOPLE, type QueryKind, type Topic, pairs, pick } from './model.ts';

type Note = Topic & { state: 'success' | 'failure' | 'rolled_back' };

const NOTES: Note[] = [
  { doc: 'Canary halted: error rate above 2 percent on the new pods', words: 'canary halted error rate', para: 'the trial rollout got stopped because too many calls failed', state: 'failure' },
  { doc: 'Rolled back after the p95 latency doubled within ten minutes', words: 'rolled back p95 latency doubled', para: 'we undid the release since responses got twice as slow', state: 'rolled_back' },
  { doc: 'Blue-green switch completed with zero downtime', words: 'blue-green switch zero downtime', para: 'traffic flipped to the other fleet without anyone noticing', state: 'success' },
  { doc: 'Failed: database migration step timed out waiting for a lock', words: 'migration timed out lock', para: 'the release got stuck because a schema change could not get exclusive access', state: 'failure' },
  { doc: 'Hotfix for the currency rounding bug in refunds', words: 'hotfix currency rounding refunds', para: 'urgent patch so money returned to customers is not off by a cent', state: 'success' },
  { doc: 'Rolled back: missing environment variable crashed the container on boot', words: 'missing environment variable crashed boot', para: 'undone because a setting was absent and the app died at startup', state: 'rolled_back' },
  { doc: 'Shipped the new pricing engine behind a flag at 5 percent', words: 'pricing engine flag 5 percent', para: 'released the new cost calculation to a small slice of users', state: 'success' },
  { doc: 'Failed: image pull backoff, registry credentials expired', words: 'image pull backoff registry credentials', para: 'the cluster could not download the build because the login to the artifact store lapsed', state: 'failure' },
  { doc: 'Security patch for the OpenSSL vulnerability', words: 'security patch openssl vulnerability', para: 'fix for the crypto library hole everyone was talking about', state: 'success' },
  { doc: 'Rolled back after the smoke tests failed on the login page', words: 'smoke tests failed login page', para: 'reverted since the quick checks could not sign in', state: 'rolled_back' },
  { doc: 'Config-only change raising the worker concurrency to 32', words: 'worker concurrency 32 config', para: 'just a settings tweak so more jobs run in parallel', state: 'success' },
  { doc: 'Failed: health checks never passed because the port changed to 9090', words: 'health checks port 9090', para: 'the new build listened somewhere the probes did not look', state: 'failure' },
  { doc: 'Dependency bump to fix the prototype pollution advisory', words: 'dependency bump prototype pollution advisory', para: 'updated a package to close the object injection security warning', state: 'success' },
  { doc: 'Rolled back: memory usage climbed until the pods were evicted', words: 'memory usage pods evicted', para: 'reverted because the containers grew until the node threw them out', state: 'rolled_back' },
  { doc: 'Enabled HTTP/2 on the upstream connections', words: 'http/2 upstream connections', para: 'switched backend links to the multiplexed web protocol', state: 'success' },
  { doc: 'Failed: Terraform plan wanted to destroy the production database', words: 'terraform plan destroy database', para: 'infrastructure as code tried to delete the live db so we aborted', state: 'failure' },
  { doc: 'Shipped dark mode for the mobile app settings screen', words: 'dark mode mobile settings', para: 'released the night theme on the phone preferences view', state: 'success' },
  { doc: 'Rolled back because of a spike in 401 responses after the auth library update', words: '401 responses auth library', para: 'undone since lots of users suddenly got unauthorized errors', state: 'rolled_back' },
  { doc: 'Region failover drill: moved all traffic to eu-west-1', words: 'region failover drill eu-west-1', para: 'practice run where every request was sent to the Irish data center', state: 'success' },
  { doc: 'Failed: disk quota exceeded while unpacking assets', words: 'disk quota exceeded assets', para: 'ran out of allowed storage while extracting static files', state: 'failure' },
];

const PARA_FORMS = [
  (svc: string, p: string) => `${svc} release where ${p}`,
  (svc: string, p: string) => `the ${svc} rollout: ${p}`,
  (svc: string, p: string) => `what happened when ${p} for ${svc}`,
];

export const deploys = (rand: () => number): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const entries: EvalEntry[] = [];
  const queries: EvalQuery[] = [];
  pairs(rand, NOTES, 75).forEach(({ service, topic }, i) => {
    const id = 880_000 + i * 7;
    const key = `deployment-${id}`;
    const path = `repos/acme/${service.id}`;
    const version = `v${1 + (i % 4)}.${(i * 7) % 30}.${i % 10}`;
    const environment = pick(rand, ['production', 'production', 'staging', 'canary']);
    entries.push({
      entity_path: path,
      key,
      event_type: `deployment_status.${topic.state}`,
      agent_id: 'external/github',
      value: { environment, state: topic.state, version, description: topic.doc, creator: pick(rand, PEOPLE), ref: `release/${version}` },
    });
    if (i % 3 !== 2 || queries.length >= 24) return;
    const kind: QueryKind = (['paraphrase', 'lexical', 'keyword'] as const)[queries.length % 3] as QueryKind;
    const query =
      kind === 'lexical' ? `${service.id} deployment ${version} ${topic.doc}` : kind === 'keyword' ? `${service.spoken} deploy ${topic.words}` : (PARA_FORMS[queries.length % PARA_FORMS.length] as (s: string, p: string) => string)(service.spoken, topic.para);
    queries.push({ query, kind, expected: [`${path}/${key}`] });
  });
  return { entries, queries };
};
