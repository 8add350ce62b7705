import { type EvalEntry, type EvalQuery, PEOPLE, type QueryKind, type Topic, pairs, pick } from './model.ts';

const CHANGES: Topic[] = [
  { doc: 'Add retry with exponential backoff and jitter to webhook delivery', words: 'retry backoff jitter webhook', para: 'make outgoing callbacks try again with growing random waits' },
  { doc: 'Migrate configuration loading from YAML files to environment variables', words: 'configuration yaml environment variables', para: 'read settings from the process env instead of config files' },
  { doc: 'Upgrade Node.js runtime from 20 to 24', words: 'upgrade node 24 runtime', para: 'move to the newer javascript engine release' },
  { doc: 'Replace hand-rolled JWT parsing with the jose library', words: 'jwt parsing jose library', para: 'stop decoding auth tokens ourselves and use a maintained package' },
  { doc: 'Add OpenTelemetry tracing spans around database calls', words: 'opentelemetry tracing spans database', para: 'instrument sql queries so they show up in distributed traces' },
  { doc: 'Fix N+1 queries when loading order line items', words: 'n+1 queries order line items', para: 'stop fetching each purchase row one at a time' },
  { doc: 'Introduce idempotency keys for POST requests', words: 'idempotency keys post', para: 'let clients safely resend a create call without duplicates' },
  { doc: 'Remove deprecated v1 endpoints after the sunset date', words: 'remove deprecated v1 endpoints', para: 'delete the old api version we announced we would retire' },
  { doc: 'Cache product catalog responses in Redis for 5 minutes', words: 'cache catalog redis', para: 'keep item listings in memory for a short while to cut load' },
  { doc: 'Paginate the admin user list with cursors instead of offsets', words: 'paginate cursors offsets admin users', para: 'page through accounts with continuation tokens rather than skip counts' },
  { doc: 'Add circuit breaker around the recommendations client', words: 'circuit breaker client', para: 'stop calling a failing dependency for a while when it keeps erroring' },
  { doc: 'Bump protobuf definitions and regenerate gRPC stubs', words: 'protobuf grpc stubs regenerate', para: 'refresh the generated rpc code from the updated schema files' },
  { doc: 'Enforce request body size limit of 1 MiB', words: 'request body size limit', para: 'reject uploads that are too big before parsing them' },
  { doc: 'Switch container base image to distroless', words: 'distroless base image container', para: 'use a minimal os layer without a shell for the docker build' },
  { doc: 'Add structured JSON logging with request ids', words: 'structured json logging request ids', para: 'emit machine readable log lines that carry a correlation identifier' },
  { doc: 'Fix race condition in the session refresh handler', words: 'race condition session refresh', para: 'two concurrent renewals of a login could clobber each other' },
  { doc: 'Move image thumbnails generation to a background queue', words: 'thumbnails background queue', para: 'make small picture previews asynchronously instead of inline' },
  { doc: 'Add Prometheus metrics for queue depth and processing time', words: 'prometheus metrics queue depth', para: 'expose how many jobs are waiting and how long they take on the monitoring dashboard' },
  { doc: 'Encrypt personal data columns at rest with envelope encryption', words: 'encrypt personal data envelope encryption', para: 'protect customer pii stored in the db with wrapped keys' },
  { doc: 'Make the nightly export job resumable after failures', words: 'nightly export resumable', para: 'let the overnight data dump continue where it stopped when it crashes' },
  { doc: 'Add end-to-end tests for the refund flow', words: 'end-to-end tests refund flow', para: 'cover giving customers their money back with full browser tests' },
  { doc: 'Reduce Docker image size by using multi-stage builds', words: 'docker image size multi-stage', para: 'make the shipped container smaller by compiling in a separate step' },
  { doc: 'Add graceful shutdown that drains in-flight requests', words: 'graceful shutdown drains in-flight', para: 'finish work already started before the process exits on sigterm' },
  { doc: 'Replace polling with server-sent events for live updates', words: 'server-sent events polling live updates', para: 'push changes to the browser instead of asking over and over' },
  { doc: 'Validate webhook payloads with zod schemas', words: 'validate webhook payloads zod', para: 'check incoming callback bodies against a typed definition' },
  { doc: 'Add database read replica routing for reporting queries', words: 'read replica routing reporting', para: 'send heavy analytics selects to a secondary copy of the db' },
  { doc: 'Fix timezone bug in invoice due dates', words: 'timezone bug invoice due dates', para: 'bills showed the wrong deadline for customers in other regions' },
  { doc: 'Add feature flag to gradually roll out the new checkout page', words: 'feature flag roll out checkout page', para: 'hide the redesigned purchase screen behind a toggle and ramp it up' },
  { doc: 'Harden CSRF protection on form submissions', words: 'csrf protection form', para: 'stop other sites from tricking browsers into posting forms' },
  { doc: 'Batch outgoing emails to respect provider rate limits', words: 'batch emails provider rate limits', para: 'group mail sends so the delivery vendor does not throttle us' },
  { doc: 'Add health and readiness probes for Kubernetes', words: 'health readiness probes kubernetes', para: 'let the orchestrator know when pods are alive and able to serve' },
  { doc: 'Speed up CI by caching dependencies between runs', words: 'ci caching dependencies', para: 'make the build pipeline faster by reusing downloaded packages' },
  { doc: 'Add soft delete and restore for user accounts', words: 'soft delete restore accounts', para: 'mark profiles as removed so they can be brought back later' },
  { doc: 'Rewrite the search ranking to use BM25', words: 'search ranking bm25', para: 'change how results are ordered to a probabilistic relevance formula' },
  { doc: 'Compress API responses with gzip and brotli', words: 'compress responses gzip brotli', para: 'shrink what the server sends back over the wire' },
  { doc: 'Add audit log entries for permission changes', words: 'audit log permission changes', para: 'record who granted or revoked access and when' },
  { doc: 'Fix memory leak in the websocket connection manager', words: 'memory leak websocket connection manager', para: 'long lived socket handling kept growing its heap' },
  { doc: 'Introduce a dead letter queue for failed messages', words: 'dead letter queue failed messages', para: 'park events that cannot be processed instead of retrying forever' },
  { doc: 'Add tenant isolation checks to every repository query', words: 'tenant isolation checks queries', para: 'make sure one customer can never read another customer data' },
  { doc: 'Upgrade the Postgres driver and enable prepared statements', words: 'postgres driver prepared statements', para: 'update the db client library and let it reuse parsed sql plans' },
];

const PARA_FORMS = [
  (svc: string, p: string) => `which ${svc} change was meant to ${p}`,
  (svc: string, p: string) => `PR in ${svc} to ${p}`,
  (svc: string, p: string) => `did anyone ${p} in ${svc}`,
];

const lowerFirst = (s: string): string => s[0]?.toLowerCase() + s.slice(1);

export const pullRequests = (rand: () => number): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const entries: EvalEntry[] = [];
  const queries: EvalQuery[] = [];
  pairs(rand, CHANGES, 110).forEach(({ service, topic }, i) => {
    const key = `pr-${200 + i * 3}`;
    const path = `repos/acme/${service.id}`;
    const state = pick(rand, ['merged', 'merged', 'open', 'closed']);
    entries.push({
      entity_path: path,
      key,
      event_type: `pull_request.${state === 'open' ? 'opened' : state}`,
      agent_id: 'external/github',
      value: {
        title: topic.doc,
        number: 200 + i * 3,
        state,
        author: pick(rand, PEOPLE),
        base: 'main',
        body: `This PR will ${lowerFirst(topic.doc)} in ${service.id}. Reviewed by ${pick(rand, PEOPLE)}.`,
        additions: Math.floor(rand() * 900),
        deletions: Math.floor(rand() * 400),
        changed_files: 1 + Math.floor(rand() * 30),
      },
    });
    if (i % 3 !== 1 || queries.length >= 33) return;
    const kind: QueryKind = (['keyword', 'paraphrase', 'lexical'] as const)[queries.length % 3] as QueryKind;
    const query =
      kind === 'lexical' ? `${service.id} pull request: ${topic.doc}` : kind === 'keyword' ? `${service.spoken} ${topic.words}` : (PARA_FORMS[queries.length % PARA_FORMS.length] as (s: string, p: string) => string)(service.spoken, topic.para);
    queries.push({ query, kind, expected: [`${path}/${key}`] });
  });
  return { entries, queries };
};
