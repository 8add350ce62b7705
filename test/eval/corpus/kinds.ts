import type { EvalEntry, EvalQuery, KindsKind } from './model.ts';

/**
 * Memories of kinds the operations set lacks, as agents and people write them while they work:
 * notes on code (files, functions, commands), error messages with their causes, people's
 * preferences, roles and absences, configuration (keys, values, flags), meeting notes,
 * onboarding and how-to documents, vendors and contacts, an agent's tasks and observations,
 * network and host facts, product terms. Asked three ways: `identifier`, a token typed exactly
 * as written (a function, a file, a path, an address, an error code, a setting's key);
 * `question`, a question in the memory's own words; `paraphrase`, the same need in other words.
 * Each memory answers its queries alone. They are searched among the operations set's entries,
 * which share their services, people and vocabulary.
 */

interface Memory {
  entity_path: string;
  key: string;
  value: string | Record<string, unknown>;
  memory_type?: string;
  tags?: string[];
  /** How it is asked for, by kind. */
  asked: Partial<Record<KindsKind, string[]>>;
}

const MEMORIES: Memory[] = [
  // Notes on code.
  {
    entity_path: 'repos/acme/api',
    key: 'note-retry',
    value: 'The retry logic for outbound webhooks lives in src/webhooks/retryPolicy.ts (function computeBackoff); max 8 attempts with jitter.',
    asked: { identifier: ['computeBackoff', 'retryPolicy.ts'], question: ['where is the backoff code for webhook retries'] },
  },
  {
    entity_path: 'repos/acme/api',
    key: 'note-auth',
    value: 'Auth middleware is in src/http/middleware/requireAuth.ts; it reads the JWT from the Authorization header and checks the aud claim.',
    asked: { identifier: ['requireAuth'], paraphrase: ['how do we validate tokens in the api'] },
  },
  {
    entity_path: 'repos/acme/api',
    key: 'note-rate-limit',
    value: 'Rate limiting uses a token bucket in Redis (key prefix rl:{tenant}); the limits come from plans.yaml and the Lua script is scripts/redis/take_token.lua.',
    asked: { identifier: ['take_token.lua'], question: ['how does the rate limiter work'], paraphrase: ['throttling requests per customer'] },
  },
  {
    entity_path: 'repos/acme/api',
    key: 'note-migrations',
    value: 'Schema migrations live in db/migrations and run with `make migrate`. Never edit an applied migration, add a new one; the CI job db-check fails when a migration has no down step.',
    asked: { identifier: ['make migrate'], question: ['how do I run the database migrations'], paraphrase: ['changing the database schema safely'] },
  },
  {
    entity_path: 'repos/acme/web',
    key: 'note-i18n',
    value: 'Translations are in web/locales/*.json, loaded lazily by useTranslation(); missing keys fall back to English and are reported to Sentry with the tag i18n.missing.',
    asked: { identifier: ['useTranslation', 'i18n.missing'], question: ['where are the translation files'], paraphrase: ['text shows up in English for French users'] },
  },
  {
    entity_path: 'repos/acme/web',
    key: 'note-flags',
    value: "Read feature flags in components with the useFlag('flag_name') hook; flags are fetched once per session from /api/flags and cached in localStorage under ff:v2.",
    asked: { identifier: ['useFlag'], paraphrase: ['checking whether a feature is switched on in the frontend'] },
  },
  {
    entity_path: 'repos/acme/infra',
    key: 'note-terraform',
    value: 'Terraform state for prod is in the S3 bucket acme-tfstate-prod with DynamoDB locking (table tf-locks); run terraform plan through the ./tf wrapper, which picks the workspace.',
    asked: { identifier: ['acme-tfstate-prod', 'tf-locks'], question: ['where is the terraform state stored'] },
  },
  {
    entity_path: 'repos/acme/infra',
    key: 'note-namespaces',
    value: 'Each team gets a Kubernetes namespace named team-<name>; resource quotas are in k8s/quotas/ and default to 8 CPU and 16Gi of memory per namespace.',
    asked: { question: ['what are the default resource quotas for a team namespace'], paraphrase: ['how much compute does each team get on the cluster'] },
  },
  {
    entity_path: 'repos/acme/api',
    key: 'note-pagination',
    value: 'List endpoints paginate with an opaque cursor (base64 of the last id and created_at); the page size defaults to 50 and is capped at 200.',
    asked: { question: ['how does pagination work on list endpoints'], paraphrase: ['getting the next batch of results from the api'] },
  },
  {
    entity_path: 'repos/acme/api',
    key: 'note-tests',
    value: 'Integration tests need a local Postgres: run docker compose up db, then npm run test:int. The suite resets the schema before each file.',
    asked: { identifier: ['test:int'], question: ['how do I run the integration tests locally'] },
  },
  {
    entity_path: 'repos/acme/api',
    key: 'perf-p99',
    value: 'p99 latency of GET /orders went from 180 ms to 1.2 s after the N+1 query added in OrderSerializer; fixed with a prefetch.',
    asked: { identifier: ['OrderSerializer'], paraphrase: ['the orders endpoint got slow'] },
  },
  {
    entity_path: 'repos/acme/web',
    key: 'dep-upgrade',
    value: 'Upgraded React from 17 to 18; the only breaking change we hit was automatic batching in the settings page.',
    asked: { paraphrase: ['what broke when we moved to the new react major version'] },
  },
  // Errors, their causes and fixes.
  {
    entity_path: 'services/report-builder',
    key: 'error-oom',
    value: { error: 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory', fix: 'raised --max-old-space-size to 4096 and streamed the CSV export' },
    asked: { identifier: ['JavaScript heap out of memory'], question: ['why did the report builder run out of memory'] },
  },
  {
    entity_path: 'repos/acme/api',
    key: 'error-econnrefused',
    value: 'Error: connect ECONNREFUSED 10.0.3.17:5432 at TCPConnectWrap.afterConnect. The api could not reach Postgres after the failover: the DNS record still pointed at the old primary.',
    asked: { identifier: ['10.0.3.17', 'ECONNREFUSED 5432'], paraphrase: ['the api lost its database connection after we switched primaries'] },
  },
  {
    entity_path: 'repos/acme/web',
    key: 'error-hydration',
    value: { error: 'Hydration failed because the initial UI does not match what was rendered on the server', page: '/account/settings', cause: "a date formatted in the browser's time zone", fix: 'format dates on the server and pass strings' },
    asked: { question: ['why was there a hydration error on the settings page'], paraphrase: ['server and browser rendering did not agree'] },
  },
  {
    entity_path: 'services/billing-jobs',
    key: 'error-deadlock',
    value: 'ERROR: deadlock detected (SQLSTATE 40P01) in the nightly invoice job: two workers updated invoices and line_items in opposite order. Fixed by locking invoices first.',
    asked: { identifier: ['40P01'], question: ['what caused the deadlock in the invoice job'], paraphrase: ['two workers blocking each other in the database'] },
  },
  {
    entity_path: 'services/search-svc',
    key: 'error-es-429',
    value: { error: 'es_rejected_execution_exception: rejected execution of coordinating operation', status: 429, cause: 'bulk indexing at peak traffic filled the write thread pool queue', fix: 'moved the reindex to a throttled background job' },
    asked: { identifier: ['es_rejected_execution_exception'], paraphrase: ['the search cluster refused writes under load'] },
  },
  {
    entity_path: 'services/notifications-worker',
    key: 'error-tls',
    value: 'x509: certificate signed by unknown authority when calling the SMS provider from the new base image, which lacked ca-certificates. Added the package to the Dockerfile.',
    asked: { identifier: ['x509: certificate signed by unknown authority'], question: ['why did the notifications worker fail to call the SMS provider'], paraphrase: ['container image missing root certificates'] },
  },
  {
    entity_path: 'services/image-resizer',
    key: 'error-segfault',
    value: 'The resizer crashed with SIGSEGV inside the sharp library after the move to Node 22; pinned sharp to 0.33.5, which ships prebuilt binaries for it.',
    asked: { identifier: ['SIGSEGV sharp'], paraphrase: ['image service crashing since the runtime upgrade'] },
  },
  {
    entity_path: 'services/payments-svc',
    key: 'error-double-charge',
    value: 'Duplicate charges: the retry after a gateway timeout sent a new Idempotency-Key header each time. Keys are now derived from the order id.',
    asked: { identifier: ['Idempotency-Key'], paraphrase: ['customers were billed twice for one order'] },
  },
  // People: preferences, roles, absences.
  {
    entity_path: 'users/maya',
    key: 'pref-editor',
    value: 'Maya prefers tabs over spaces, uses Neovim, and wants code review comments batched at the end of the day.',
    memory_type: 'preference',
    asked: { question: ['what editor does Maya use'] },
  },
  {
    entity_path: 'users/maya',
    key: 'pref-meetings',
    value: 'Maya does not take meetings before 10:00 CET; Fridays are her focus days.',
    memory_type: 'preference',
    asked: { question: ['when can I schedule a meeting with Maya'], paraphrase: ['is Maya available early in the morning'] },
  },
  {
    entity_path: 'users/tom',
    key: 'role',
    value: 'Tom is the on-call lead for payments this quarter and owns the PagerDuty schedule.',
    asked: { question: ['who is on call for payments'], paraphrase: ['who runs the payments rota'] },
  },
  {
    entity_path: 'users/priya',
    key: 'pref-updates',
    value: 'Priya wants incident updates in #inc-payments rather than in DMs, and prefers short written summaries to calls.',
    memory_type: 'preference',
    asked: { identifier: ['#inc-payments'], paraphrase: ['how does Priya like to be kept informed during an outage'] },
  },
  {
    entity_path: 'users/daniel',
    key: 'pref-review',
    value: 'Daniel asks for small pull requests (under 400 lines) and wants screenshots for any UI change.',
    memory_type: 'preference',
    asked: { question: ['how big should pull requests be for Daniel'] },
  },
  {
    entity_path: 'users/sam',
    key: 'away',
    value: 'Sam is on parental leave from 2026-12-01 to 2027-02-28; Lena covers the data platform on-call meanwhile.',
    asked: { question: ['who covers the data platform while Sam is on leave'], paraphrase: ['which colleague is away for a few months'] },
  },
  {
    entity_path: 'users/lena',
    key: 'expertise',
    value: 'Lena knows the Kafka cluster best: she set up MirrorMaker between the EU and US regions.',
    asked: { identifier: ['MirrorMaker'], paraphrase: ['who to ask about replicating topics across regions'] },
  },
  // Configuration.
  {
    entity_path: 'config/prod',
    key: 'db-pool',
    value: { setting: 'DATABASE_POOL_MAX', value: 40, previous: 20, reason: 'connection waits during the 9am batch' },
    asked: { identifier: ['DATABASE_POOL_MAX'], question: ['what is the max size of the database connection pool in production'] },
  },
  {
    entity_path: 'config/prod',
    key: 'flag-checkout',
    value: { flag: 'new_checkout_flow', enabled_for: '25% of EU users', owner: 'growth team' },
    asked: { identifier: ['new_checkout_flow'], paraphrase: ['how many people see the redesigned checkout'] },
  },
  {
    entity_path: 'config/prod',
    key: 'cache-ttl',
    value: { setting: 'CACHE_TTL_SECONDS', value: 300, scope: 'product catalogue', note: 'lowered from 3600 after stale prices showed at checkout' },
    asked: { identifier: ['CACHE_TTL_SECONDS'], paraphrase: ['prices at checkout were out of date'] },
  },
  {
    entity_path: 'config/staging',
    key: 'smtp',
    value: { setting: 'SMTP_HOST', value: 'mailhog.staging.acme.internal:1025', note: 'staging mail never leaves the cluster; open MailHog to read it' },
    asked: { identifier: ['mailhog.staging.acme.internal'], paraphrase: ['where do emails sent from staging end up'] },
  },
  {
    entity_path: 'config/prod',
    key: 'autoscaling',
    value: 'The checkout deployment scales between 6 and 40 pods at 65% CPU; the HPA maximum was raised from 20 after Black Friday.',
    asked: { question: ['how many pods can checkout scale to'] },
  },
  {
    entity_path: 'config/prod',
    key: 'log-level',
    value: { setting: 'LOG_LEVEL', value: 'warn', exception: 'payments-svc runs at info for PCI audit trails' },
    asked: { identifier: ['LOG_LEVEL'], paraphrase: ['how verbose is logging in production'] },
  },
  {
    entity_path: 'config/prod',
    key: 'timeouts',
    value: 'Upstream timeouts at the edge proxy: 15 s for /api and 60 s for /exports; gRPC deadlines default to 2 s.',
    asked: { question: ['what are the upstream timeouts at the edge proxy'], paraphrase: ['how long before a request through the proxy gives up'] },
  },
  // Meetings.
  {
    entity_path: 'meetings/2026-11-18',
    key: 'arch-review',
    value: 'Architecture review: agreed to split the billing module out of the monolith into its own service by Q2; Priya writes the RFC; concerns about distributed transactions.',
    memory_type: 'decision',
    asked: { question: ['what did we decide about splitting billing out of the monolith'] },
  },
  {
    entity_path: 'meetings/2026-11-25',
    key: 'retro',
    value: 'Sprint retro: deploys were slow because the Docker image is 2.3 GB; action item for Daniel to try multi-stage builds.',
    asked: { question: ['why were deploys slow last sprint'], paraphrase: ['our container image is too large'] },
  },
  {
    entity_path: 'meetings/2026-11-20',
    key: 'planning',
    value: 'Q1 planning: the mobile team commits to offline mode; platform commits to the Postgres 16 upgrade; search relevance work is deferred to Q2.',
    asked: { question: ['what did the mobile team commit to for Q1'] },
  },
  {
    entity_path: 'meetings/2026-11-27',
    key: 'postmortem',
    value: 'Postmortem review of the checkout outage: the root cause was a config push without a canary. Actions: canary every config change, alert on error budget burn.',
    asked: { question: ['what were the action items from the checkout outage postmortem'] },
  },
  {
    entity_path: 'meetings/2026-11-12',
    key: 'vendor-call',
    value: 'Call with Datadog about the renewal: they offered 18% off for a three-year commitment; we decide by December 15.',
    asked: { question: ['what discount did Datadog offer'], paraphrase: ['the monitoring vendor contract negotiation'] },
  },
  // Onboarding and how-to documents.
  {
    entity_path: 'docs/onboarding',
    key: 'vpn',
    value: 'To get VPN access, file an IT ticket with your laptop serial number; approval takes one business day. The client is WireGuard.',
    asked: { question: ['how do I get vpn access'] },
  },
  {
    entity_path: 'docs/onboarding',
    key: 'staging-url',
    value: 'Staging lives at https://staging.acme.internal; log in with SSO. Seed data is reset every Sunday night.',
    asked: { identifier: ['staging.acme.internal'], question: ['what is the staging address'] },
  },
  {
    entity_path: 'docs/onboarding',
    key: 'laptop',
    value: 'New engineers get a MacBook Pro with 32 GB; run the bootstrap script from the dotfiles repo, which installs Homebrew, asdf and the AWS CLI with SSO profiles.',
    asked: { question: ['what laptop do new engineers get'], paraphrase: ['setting up my computer on the first day'] },
  },
  {
    entity_path: 'docs/onboarding',
    key: 'prod-access',
    value: 'Production database access is read-only through the bastion (bastion.acme.internal) and needs a Jira ticket approved by your lead; sessions are recorded.',
    asked: { identifier: ['bastion.acme.internal'], paraphrase: ['connecting to the live database'] },
  },
  {
    entity_path: 'docs/howto',
    key: 'mobile-release',
    value: 'To cut a release of the mobile app, bump the version in app.json and tag it mobile-vX.Y.Z; the release pipeline submits it to TestFlight and Play internal testing.',
    asked: { identifier: ['TestFlight'], question: ['how do I release the mobile app'] },
  },
  {
    entity_path: 'docs/howto',
    key: 'secrets',
    value: 'Secrets live in Vault under kv/apps/<service>; the app reads them at boot through the vault-agent sidecar. Never put them in environment files in the repo.',
    asked: { identifier: ['vault-agent'], question: ['where do service secrets live'], paraphrase: ['storing passwords and api keys for our services'] },
  },
  // Vendors and contacts.
  {
    entity_path: 'people/vendors',
    key: 'stripe',
    value: 'Our Stripe account manager is Dana Lee (dana@stripe.example); escalate disputes through the dashboard first.',
    asked: { identifier: ['dana@stripe.example'], question: ['who is our account manager at Stripe'] },
  },
  {
    entity_path: 'people/vendors',
    key: 'aws',
    value: 'Our AWS technical account manager is Marco Rossi; open a case with severity Business-critical for production outages and he joins within the hour.',
    asked: { question: ['who is our AWS technical account manager'], paraphrase: ['getting help from the cloud provider during an outage'] },
  },
  {
    entity_path: 'people/vendors',
    key: 'pagerduty-seats',
    value: 'PagerDuty: 45 licensed users, renewal in March; adding a user needs approval from Tom.',
    asked: { question: ['how many PagerDuty licences do we have'], paraphrase: ['adding someone to the paging tool'] },
  },
  // An agent's tasks and observations.
  {
    entity_path: 'tasks/agent-7',
    key: 'uuid-migration',
    value: { task: 'migrate the users table to UUID primary keys', status: 'blocked', blocked_by: 'foreign keys in the audit schema' },
    asked: { paraphrase: ['why can we not switch user ids to uuids yet'] },
  },
  {
    entity_path: 'tasks/agent-3',
    key: 'flaky-coupon',
    value: { task: 'quarantine the flaky test checkout.spec.ts › applies coupon twice', status: 'in progress', notes: 'fails 1 in 30 runs on CI, passes locally' },
    asked: { identifier: ['checkout.spec.ts'], paraphrase: ['the coupon test that fails at random'] },
  },
  {
    entity_path: 'tasks/agent-3',
    key: 'lodash-bump',
    value: { task: 'bump lodash to 4.17.21 across services', status: 'done', pr: 'acme/api#1842' },
    asked: { identifier: ['acme/api#1842', 'lodash 4.17.21'] },
  },
  {
    entity_path: 'tasks/agent-9',
    key: 'kafka-runbook',
    value: 'Write the runbook for rotating the Kafka TLS certificates before they expire on 2027-01-15.',
    asked: { question: ['when do the Kafka TLS certificates expire'] },
  },
  {
    entity_path: 'agents/agent-7',
    key: 'ci-build-time',
    value: 'Observed: the api CI build takes 14 minutes, 9 of them in npm ci; a dependency cache would cut most of it.',
    memory_type: 'observation',
    asked: { question: ['how long does the api CI build take'], paraphrase: ['why is our continuous integration so slow'] },
  },
  {
    entity_path: 'agents/agent-3',
    key: 'lint-promises',
    value: 'Observed: the eslint rule no-floating-promises flags 120 places in src/jobs; most are fire-and-forget metrics calls.',
    memory_type: 'observation',
    asked: { identifier: ['no-floating-promises'] },
  },
  {
    entity_path: 'agents/agent-9',
    key: 'bucket-growth',
    value: 'Observed: the analytics S3 bucket grew by 4 TB last month because the Parquet exports are not compressed.',
    memory_type: 'observation',
    asked: { paraphrase: ['why did our storage bill for analytics jump'] },
  },
  // Network, hosts, product terms.
  {
    entity_path: 'infra/network',
    key: 'ip-plan',
    value: 'VPC CIDRs: prod 10.0.0.0/16, staging 10.1.0.0/16, and the office VPN hands out 172.20.0.0/22. Do not reuse 10.2.0.0/16: it is peered with the data warehouse.',
    asked: { identifier: ['172.20.0.0/22'], question: ['what are the VPC CIDR ranges'], paraphrase: ['which address ranges are already taken'] },
  },
  {
    entity_path: 'infra/dns',
    key: 'records',
    value: 'api.acme.com is a CNAME to the edge load balancer; status.acme.com is hosted by Statuspage; mail uses Google Workspace MX records.',
    asked: { identifier: ['status.acme.com'], paraphrase: ['where is our public status page hosted'] },
  },
  {
    entity_path: 'infra/hosts',
    key: 'ci-runners',
    value: 'The self-hosted GitHub Actions runners are ci-runner-01 to ci-runner-04 (c6i.4xlarge); the docker layer cache is on a 500 GB volume mounted at /var/lib/docker.',
    asked: { identifier: ['ci-runner-01'], paraphrase: ['which machines run our build jobs'] },
  },
  {
    entity_path: 'incidents/2026-10',
    key: 'cert-expiry',
    value: 'The TLS certificate for api.acme.com expired on 2026-10-03 at 02:00 UTC; renewals now run through cert-manager with a 30-day alert.',
    asked: { identifier: ['cert-manager'], question: ['when did the api certificate expire'] },
  },
  {
    entity_path: 'product/pricing',
    key: 'free-tier',
    value: 'The free tier allows 3 projects and 10k API calls a month; above that, requests get 402 with a link to upgrade.',
    asked: { question: ['how much does the free tier allow'], paraphrase: ['what happens when a non-paying user goes over the limit'] },
  },
  {
    entity_path: 'product/support',
    key: 'sla',
    value: 'Enterprise customers get a 99.95% uptime SLA and a 1-hour first response for P1 tickets.',
    asked: { question: ['what uptime do enterprise customers get'], paraphrase: ['how quickly must we answer a critical issue from a large customer'] },
  },
];

/** The memories as entries, and every way each is asked for as a query naming it. */
export const kinds = (): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const entries: EvalEntry[] = MEMORIES.map(({ entity_path, key, value, memory_type, tags }) => ({
    entity_path,
    key,
    value,
    ...(memory_type ? { memory_type } : {}),
    ...(tags ? { tags } : {}),
  }));
  const queries: EvalQuery[] = MEMORIES.flatMap(({ entity_path, key, asked }) =>
    (Object.entries(asked) as [KindsKind, string[]][]).flatMap(([kind, texts]) => texts.map((query) => ({ query, kind, expected: [`${entity_path}/${key}`] }))),
  );
  return { entries, queries };
};
