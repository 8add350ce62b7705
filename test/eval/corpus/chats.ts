import { type EvalEntry, type EvalQuery, PEOPLE, type QueryKind, type Topic, pairs, pick } from './model.ts';

const THREADS: Topic[] = [
  { doc: 'is the staging database being reset tonight? my test data keeps disappearing', words: 'staging database reset test data', para: 'who keeps wiping the pre-prod db' },
  { doc: 'the flaky integration test on the checkout path failed again on main, quarantining it', words: 'flaky integration test quarantining', para: 'that unreliable ci check keeps going red so we are skipping it' },
  { doc: 'can someone review my PR before the code freeze on Thursday', words: 'review pr code freeze thursday', para: 'need eyes on a change before we stop merging this week' },
  { doc: 'grafana dashboard for error budgets is showing no data since yesterday', words: 'grafana dashboard error budgets no data', para: 'the reliability charts went blank' },
  { doc: 'we are hitting the GitHub API rate limit from the release bot', words: 'github api rate limit release bot', para: 'the automation that ships builds is getting throttled by the code host' },
  { doc: 'heads up: rotating the AWS access keys for the deploy user at 3pm', words: 'rotating aws access keys deploy user', para: 'cloud credentials for the shipping account get replaced this afternoon' },
  { doc: 'customers in Brazil report the app is very slow, probably the CDN edge in Sao Paulo', words: 'brazil slow cdn sao paulo', para: 'south american users say everything crawls' },
  { doc: 'the on-call handoff doc is out of date, who owns it', words: 'on-call handoff doc out of date', para: 'the pager rotation notes are stale and nobody maintains them' },
  { doc: 'vendor says the SMS gateway will have maintenance on Sunday 02:00 UTC', words: 'sms gateway maintenance sunday', para: 'text message provider is going offline for upkeep this weekend' },
  { doc: 'load test tomorrow at 10:00, expect 5x normal traffic on the API', words: 'load test tomorrow 5x traffic', para: 'we will hammer the servers on purpose in the morning' },
  { doc: 'anyone know why the docker build takes 20 minutes now', words: 'docker build 20 minutes', para: 'container compilation got really slow lately' },
  { doc: 'the new hire needs access to the production read-only replica', words: 'new hire access read-only replica', para: 'someone who just joined wants to look at live data safely' },
  { doc: 'pagerduty woke me up three times for the same disk alert, can we tune it', words: 'pagerduty disk alert tune', para: 'got paged repeatedly at night for one storage warning' },
  { doc: 'should we pin the terraform provider version, the latest release broke our plan', words: 'pin terraform provider version', para: 'the newest infra tooling plugin update broke things, lock it down?' },
  { doc: 'postmortem for last week outage is ready for review, please comment by Friday', words: 'postmortem outage review friday', para: 'the write-up about the recent downtime needs feedback' },
  { doc: 'cost report: the analytics cluster doubled its spend this month', words: 'cost report cluster doubled spend', para: 'the bill for the data crunching machines went up twice' },
  { doc: 'kafka upgrade to 3.7 is scheduled for next sprint, any objections', words: 'kafka upgrade 3.7 sprint', para: 'planning to move the streaming platform to a newer release soon' },
  { doc: 'is it ok to delete the old feature branches older than 90 days', words: 'delete feature branches 90 days', para: 'cleaning up stale git work from last quarter' },
  { doc: 'the API docs site is returning 404 for every page after the migration', words: 'api docs 404 migration', para: 'developer reference pages all went missing after we moved them' },
  { doc: 'the mobile crash rate jumped to 3 percent after the latest app store release', words: 'mobile crash rate app store release', para: 'the phone app started falling over much more since the new version' },
  { doc: 'slack bot for deploy approvals is not responding to buttons', words: 'slack bot deploy approvals buttons', para: 'the chat helper that okays releases ignores clicks' },
  { doc: 'SSL labs grade dropped to B because of weak ciphers on the old endpoint', words: 'ssl labs grade weak ciphers', para: 'our security rating fell due to outdated encryption settings' },
  { doc: 'who approved the firewall change that blocked the partner webhook IPs', words: 'firewall change blocked partner webhook ips', para: 'a network rule edit cut off callbacks from a vendor' },
  { doc: 'the VPN drops every hour for people working from home', words: 'vpn drops every hour', para: 'remote staff lose the private network link regularly' },
  { doc: 'feature request from sales: export search results to CSV', words: 'export search results csv', para: 'customers want to download what they find as a spreadsheet' },
];

const PARA_FORMS = [
  (svc: string, p: string) => `chat about ${svc}: ${p}`,
  (svc: string, p: string) => `someone mentioned ${p} (${svc})`,
  (svc: string, p: string) => `${svc} thread where ${p}`,
];

export const chats = (rand: () => number): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const entries: EvalEntry[] = [];
  const queries: EvalQuery[] = [];
  pairs(rand, THREADS, 85).forEach(({ service, topic }, i) => {
    const channel = pick(rand, ['eng-platform', 'sre', 'dev-help', 'releases', 'incidents']);
    const ts = `${1_763_600_000 + i * 3613}.${String(100_000 + i * 17).slice(0, 6)}`;
    const [a, b, c] = [pick(rand, PEOPLE), pick(rand, PEOPLE), pick(rand, PEOPLE)];
    const path = `comms/slack/${channel}`;
    const key = `thread-${ts}`;
    entries.push({
      entity_path: path,
      key,
      event_type: 'message.thread',
      agent_id: 'external/slack',
      confidence: 0.6,
      value: `${a}: [${service.id}] ${topic.doc}\n${b}: looking into it, will update here\n${c}: thanks, ping me if you need help`,
    });
    if (i % 3 !== 2 || queries.length >= 27) return;
    const kind: QueryKind = (['lexical', 'paraphrase', 'keyword'] as const)[queries.length % 3] as QueryKind;
    const query =
      kind === 'lexical' ? `${service.id} ${topic.doc}` : kind === 'keyword' ? `${service.spoken} ${topic.words}` : (PARA_FORMS[queries.length % PARA_FORMS.length] as (s: string, p: string) => string)(service.spoken, topic.para);
    queries.push({ query, kind, expected: [`${path}/${key}`] });
  });
  return { entries, queries };
};
