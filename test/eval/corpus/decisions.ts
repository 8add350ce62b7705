import { type EvalEntry, type EvalQuery, type QueryKind, type Topic, pairs } from './model.ts';

type Decision = Topic & { why: string };

const DECISIONS: Decision[] = [
  { doc: 'Use PostgreSQL as the primary datastore instead of MongoDB', words: 'postgresql instead of mongodb', para: 'why we picked a relational db over a document store', why: 'transactions and joins matter more than schema flexibility for us' },
  { doc: 'Adopt trunk-based development with short-lived branches', words: 'trunk-based development short-lived branches', para: 'why everyone merges to main daily', why: 'long branches caused painful merges and late integration bugs' },
  { doc: 'Standardize on OpenTelemetry for tracing and metrics', words: 'standardize opentelemetry tracing', para: 'which observability standard we chose for instrumentation', why: 'vendor neutral and one SDK for traces, metrics and logs' },
  { doc: 'Move feature flags from LaunchDarkly to an in-house service', words: 'feature flags launchdarkly in-house', para: 'why we stopped paying for the toggle vendor', why: 'cost grew with seats and we only use boolean flags' },
  { doc: 'Require two approvals for changes to infrastructure code', words: 'two approvals infrastructure code', para: 'how many reviewers terraform edits need', why: 'a single reviewer missed a destructive plan last quarter' },
  { doc: 'Deprecate the GraphQL gateway in favor of REST endpoints', words: 'deprecate graphql gateway rest', para: 'why we are dropping the query language api', why: 'caching and rate limiting were hard and few clients used it' },
  { doc: 'Run all services on ARM instances to cut compute cost', words: 'arm instances compute cost', para: 'why we moved servers to graviton style processors', why: 'benchmarks showed 30 percent cheaper for the same throughput' },
  { doc: 'Keep customer data in the EU region only', words: 'customer data eu region', para: 'where personal information is allowed to be stored', why: 'GDPR commitments in our enterprise contracts' },
  { doc: 'Use Kafka for event streaming rather than RabbitMQ', words: 'kafka event streaming rabbitmq', para: 'why we chose a log based broker over a classic message queue', why: 'replay and retention matter for analytics and audit' },
  { doc: 'Adopt an error budget policy that freezes feature work at 100 percent burn', words: 'error budget policy freeze', para: 'what happens when we use up our reliability allowance', why: 'reliability work kept losing to features' },
  { doc: 'Write new backend services in TypeScript on Node.js', words: 'typescript node backend services', para: 'which language new server code should use', why: 'one language across frontend and backend and a larger hiring pool' },
  { doc: 'Store secrets in HashiCorp Vault, never in environment files', words: 'secrets vault environment files', para: 'where passwords and tokens must be kept', why: 'leaked .env files in two repositories last year' },
  { doc: 'Version the public API in the URL path', words: 'version api url path', para: 'how we number releases of the external interface', why: 'clients and proxies see the version plainly and caching stays simple' },
  { doc: 'Retire the monolith reporting module by Q3', words: 'retire monolith reporting', para: 'when the old all-in-one reports code goes away', why: 'it blocks the database upgrade and has no owner' },
  { doc: 'Use blue-green deployments for stateful services', words: 'blue-green deployments stateful', para: 'how we release things that keep data', why: 'instant rollback matters more than the extra capacity cost' },
  { doc: 'Limit on-call shifts to one week with a follow-the-sun rotation', words: 'on-call shifts one week follow-the-sun', para: 'how long someone carries the pager', why: 'night pages were burning people out' },
  { doc: 'Adopt Renovate to automate dependency updates', words: 'renovate automate dependency updates', para: 'which bot keeps our packages current', why: 'manual upgrades fell years behind' },
  { doc: 'Log retention of 30 days in hot storage and one year in cold storage', words: 'log retention 30 days cold storage', para: 'how long we keep log lines around', why: 'balance of incident needs, audit needs and storage cost' },
  { doc: 'Use Protobuf over JSON for internal service-to-service calls', words: 'protobuf internal service calls', para: 'what wire format backends use to talk to each other', why: 'smaller payloads and typed contracts across teams' },
  { doc: 'Allow only squash merges on the main branch', words: 'squash merges main branch', para: 'how pull requests get combined into the trunk', why: 'a readable history with one commit per change' },
];

export const decisions = (rand: () => number): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const entries: EvalEntry[] = [];
  const queries: EvalQuery[] = [];
  pairs(rand, DECISIONS, 50).forEach(({ service, topic }, i) => {
    const path = `decisions/${service.id}`;
    const key = `adr-${String(i + 1).padStart(3, '0')}`;
    const asText = i % 2 === 0;
    entries.push({
      entity_path: path,
      key,
      memory_type: 'decision',
      agent_id: 'architecture-bot',
      confidence: 0.9,
      value: asText
        ? `Decision for ${service.id}: ${topic.doc}. Status: accepted. Because ${topic.why}.`
        : { title: topic.doc, status: 'accepted', scope: service.id, context: `Raised by the ${service.id} team.`, rationale: `Because ${topic.why}.` },
    });
    if (i % 2 !== 1 || queries.length >= 24) return;
    const kind: QueryKind = (['lexical', 'keyword', 'paraphrase'] as const)[queries.length % 3] as QueryKind;
    const query = kind === 'lexical' ? `${service.id} decision: ${topic.doc}` : kind === 'keyword' ? `${service.spoken} ${topic.words}` : `${topic.para} (${service.spoken})`;
    queries.push({ query, kind, expected: [`${path}/${key}`] });
  });
  return { entries, queries };
};
