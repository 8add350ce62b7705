import { type EvalEntry, type EvalQuery, PEOPLE, type QueryKind, type Topic, pairs, pick } from './model.ts';

const ISSUES: Topic[] = [
  { doc: 'Users cannot reset their password when the email contains a plus sign', words: 'reset password email plus sign', para: 'people with a + in their address are locked out of account recovery' },
  { doc: 'Export to PDF cuts off the last column of wide tables', words: 'export pdf cuts off column', para: 'printable documents lose the rightmost data when the grid is broad' },
  { doc: 'Add two-factor authentication with TOTP apps', words: 'two-factor authentication totp', para: 'support one time codes from authenticator phone apps at login' },
  { doc: 'Search results ignore accents, cafe does not match café', words: 'search accents cafe café', para: 'looking for words with diacritics gives nothing' },
  { doc: 'Dashboard charts render blank in Safari 17', words: 'dashboard charts blank safari', para: 'graphs show nothing on apple browsers' },
  { doc: 'Bulk import fails silently for CSV files over 50 MB', words: 'bulk import csv 50 mb fails silently', para: 'large spreadsheet uploads quietly do nothing' },
  { doc: 'Notification emails are sent twice for the same order', words: 'notification emails sent twice order', para: 'customers get duplicate mail about one purchase' },
  { doc: 'Session expires after 5 minutes instead of 8 hours', words: 'session expires 5 minutes', para: 'people get logged out far too quickly' },
  { doc: 'Add dark mode to the web dashboard', words: 'dark mode web dashboard', para: 'offer a night theme in the browser console' },
  { doc: 'Webhook retries do not respect the Retry-After header', words: 'webhook retries retry-after header', para: 'outgoing callbacks try again too soon ignoring the wait hint' },
  { doc: 'Localize date formats for German and Japanese users', words: 'localize date formats german japanese', para: 'show calendar days the way people in Berlin and Tokyo expect' },
  { doc: 'API returns 500 instead of 400 for malformed JSON', words: 'api 500 malformed json', para: 'a broken request body crashes the server instead of a client error' },
  { doc: 'Audit log is missing entries for API key deletion', words: 'audit log missing api key deletion', para: 'removing a credential leaves no trace in the history' },
  { doc: 'Mobile app drains battery due to background location polling', words: 'battery background location polling', para: 'the phone app eats power by checking where you are constantly' },
  { doc: 'Invoice PDF shows the wrong tax rate for EU customers', words: 'invoice tax rate eu', para: 'bills for european buyers have incorrect vat' },
  { doc: 'Allow admins to impersonate users for support', words: 'admins impersonate users support', para: 'let staff log in as a customer to help them' },
  { doc: 'Upgrade the React version to 19 in the frontend', words: 'upgrade react 19 frontend', para: 'move the web ui framework to the latest major' },
  { doc: 'Rate limit the login endpoint to stop credential stuffing', words: 'rate limit login credential stuffing', para: 'slow down sign-in attempts to block password spraying bots' },
  { doc: 'Shipping labels print with a blank barcode', words: 'shipping labels blank barcode', para: 'parcel stickers come out without the scannable stripes' },
  { doc: 'Data retention: delete inactive accounts after 24 months', words: 'data retention delete inactive accounts 24 months', para: 'remove people who have not logged in for two years' },
  { doc: 'Customer cannot change billing address after the first payment', words: 'change billing address first payment', para: 'the invoice location is stuck once someone has paid' },
  { doc: 'Improve error message when a file upload is too large', words: 'error message file upload too large', para: 'tell users clearly that their attachment exceeds the size cap' },
  { doc: 'Recommendations show out of stock products', words: 'recommendations out of stock', para: 'suggested items include things we cannot sell right now' },
  { doc: 'Support SAML single sign-on for enterprise customers', words: 'saml single sign-on enterprise', para: 'let big companies log in through their corporate identity provider' },
  { doc: 'Timeline view loads slowly for projects with 10k events', words: 'timeline loads slowly 10k events', para: 'the history screen crawls when there is a lot of activity' },
];

const PROJECTS: Record<string, string> = {
  'checkout-api': 'CHK', 'payments-svc': 'PAY', 'search-svc': 'SRCH', 'auth-gateway': 'AUTH', 'inventory-svc': 'INV',
  'notifications-worker': 'NOTIF', 'billing-jobs': 'BILL', 'mobile-bff': 'MOB', recommendations: 'REC', ledger: 'LED',
  'shipping-svc': 'SHIP', 'image-resizer': 'IMG', 'analytics-pipeline': 'ANA', 'edge-proxy': 'EDGE', 'user-profile': 'PROF',
};

const PARA_FORMS = [
  (svc: string, p: string) => `ticket about ${p} in ${svc}`,
  (svc: string, p: string) => `${svc} bug: ${p}`,
  (svc: string, p: string) => `is there an issue filed for ${svc} where ${p}`,
];

export const tickets = (rand: () => number): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const entries: EvalEntry[] = [];
  const queries: EvalQuery[] = [];
  pairs(rand, ISSUES, 80).forEach(({ service, topic }, i) => {
    const project = PROJECTS[service.id] as string;
    const key = `${project}-${300 + i * 11}`;
    const path = `projects/jira/${project}`;
    entries.push({
      entity_path: path,
      key,
      event_type: 'jira:issue_updated',
      agent_id: 'external/jira',
      value: {
        summary: topic.doc,
        status: pick(rand, ['To Do', 'In Progress', 'In Review', 'Done']),
        priority: pick(rand, ['Highest', 'High', 'Medium', 'Low']),
        assignee: pick(rand, PEOPLE),
        component: service.id,
        labels: [pick(rand, ['bug', 'feature', 'tech-debt', 'customer'])],
        description: `Reported against ${service.id}. ${topic.doc}. Steps to reproduce and logs are attached.`,
      },
    });
    if (i % 3 !== 0 || queries.length >= 27) return;
    const kind: QueryKind = (['keyword', 'lexical', 'paraphrase'] as const)[queries.length % 3] as QueryKind;
    const query =
      kind === 'lexical' ? `${project} ${topic.doc}` : kind === 'keyword' ? `${service.spoken} ${topic.words}` : (PARA_FORMS[queries.length % PARA_FORMS.length] as (s: string, p: string) => string)(service.spoken, topic.para);
    queries.push({ query, kind, expected: [`${path}/${key}`] });
  });
  return { entries, queries };
};
