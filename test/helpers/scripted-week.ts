import {
  type Delivery, deploymentStatus, githubIssue, type IncidentSpec, jiraIssue, jiraSprint, jiraVersion, pagerduty, pullRequest, slackMessage, slackTs,
} from './provider-events.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

export const CHANNEL = 'C0INCIDENT';

/**
 * A week of an engineering team's work as the four providers would report it, ending at
 * `now`, in the order the events happen. The figures the Cortex must derive from it are
 * worked out by hand in the scenario test next to each assertion.
 *
 * Checkout (repo acme/checkout, PagerDuty service "Checkout"): four incidents, one of them
 * 20 minutes after a failed production deploy and fixed by the next deploy; Payments: two
 * incidents, one 3 hours after a failed deploy (outside the 2-hour window: no trace).
 */
export const scriptedWeek = (now: number): Delivery[] => {
  const day = (n: number, hours: number, minutes = 0) => now - 7 * DAY + n * DAY + hours * HOUR + minutes * MIN;
  const ago = (minutes: number) => now - minutes * MIN;
  const events: Array<[number, Delivery]> = [];
  const at = (t: number, d: Delivery) => events.push([t, d]);

  const incident = (spec: IncidentSpec, ack: number | null, resolved: number | null) => {
    at(spec.triggered, pagerduty(spec, 'triggered', spec.triggered));
    if (ack !== null) at(ack, pagerduty(spec, 'acknowledged', ack));
    if (resolved !== null) at(resolved, pagerduty(spec, 'resolved', resolved));
  };
  const checkout = (id: string, triggered: number, assignee = 'Dana Ops'): IncidentSpec => ({ id, service: 'Checkout', title: `Checkout errors (${id})`, triggered, assignee });
  incident(checkout('Q1CHK01', day(1, 10)), day(1, 10, 5), day(1, 10, 45)); //   5 min to ack, 45 to resolve
  incident(checkout('Q1CHK02', day(3, 14)), day(3, 14, 10), day(3, 15, 30)); // 10, 90
  incident(checkout('Q1CHK03', day(5, 9, 20)), day(5, 9, 22), day(5, 10, 20)); // 2, 60 — after deploy 503 failed at 09:00
  incident(checkout('Q1CHK04', ago(120)), ago(116), null); //                     4, still acknowledged
  const payments = (id: string, triggered: number): IncidentSpec => ({ id, service: 'Payments', title: `Payments latency (${id})`, triggered, assignee: 'Lee Oncall' });
  incident(payments('Q1PAY01', day(2, 8)), null, day(2, 8, 30)); //               resolved in 30 without an ack
  incident(payments('Q1PAY02', ago(60)), null, null); //                          open

  const pr = (number: number, opened: number, additions: number, deletions: number) => ({ repo: 'checkout', number, opened, additions, deletions });
  const p99 = pr(99, day(-3, 9), 7, 1);
  at(p99.opened, pullRequest(p99, 'opened', p99.opened));
  at(day(-2, 9), pullRequest(p99, 'closed', day(-2, 9), true)); //                merged 9 days ago: outside 7 days
  const p101 = pr(101, day(0, 9), 12, 3);
  at(p101.opened, pullRequest(p101, 'opened', p101.opened)); //                  still open
  const p102 = pr(102, day(1, 9), 120, 30);
  at(p102.opened, pullRequest(p102, 'opened', p102.opened));
  at(day(2, 11), pullRequest(p102, 'closed', day(2, 11), true));
  const p103 = pr(103, day(3, 9), 40, 10);
  at(p103.opened, pullRequest(p103, 'opened', p103.opened));
  at(day(4, 16), pullRequest(p103, 'closed', day(4, 16), true));
  const p104 = pr(104, day(4, 9), 5, 5);
  at(p104.opened, pullRequest(p104, 'opened', p104.opened));
  at(day(5, 12), pullRequest(p104, 'closed', day(5, 12), false)); //              closed unmerged
  at(day(2, 13), githubIssue('checkout', 7, day(2, 13)));

  const deploy = (repo: string, id: number, env: string, final: string, t: number) => {
    at(t - 5 * MIN, deploymentStatus(repo, id, env, 'in_progress', t - 5 * MIN));
    at(t, deploymentStatus(repo, id, env, final, t));
  };
  deploy('checkout', 501, 'production', 'success', day(1, 8));
  deploy('checkout', 502, 'production', 'success', day(3, 13));
  deploy('checkout', 503, 'production', 'failure', day(5, 9)); //                 → incident Q1CHK03 at 09:20
  deploy('checkout', 504, 'production', 'success', day(5, 10, 5)); //             the fix, before 10:20
  deploy('checkout', 505, 'production', 'success', day(6, 9));
  deploy('checkout', 511, 'staging', 'success', day(1, 7));
  deploy('checkout', 512, 'staging', 'error', day(2, 10));
  deploy('checkout', 513, 'staging', 'success', day(4, 7));
  deploy('payments', 601, 'production', 'failure', day(2, 5)); //                 3 h before Q1PAY01: no trace

  const thread1 = { ts: slackTs(day(5, 9, 25)), user: 'U1' };
  at(day(5, 9, 25), slackMessage(CHANNEL, 'U1', 'Checkout 500s spiking, looking at Q1CHK03', day(5, 9, 25)));
  at(day(5, 9, 30), slackMessage(CHANNEL, 'U2', 'deploy 503 went out at 09:00, rolling back?', day(5, 9, 30), thread1));
  at(day(5, 9, 40), slackMessage(CHANNEL, 'U3', 'rollback done', day(5, 9, 40), thread1));
  const thread2 = { ts: slackTs(ago(100)), user: 'U2' };
  at(ago(100), slackMessage(CHANNEL, 'U2', 'Q1CHK04 is back, paging Dana', ago(100)));
  at(ago(90), slackMessage(CHANNEL, 'U1', 'on it', ago(90), thread2));
  at(ago(30), slackMessage(CHANNEL, 'U4', 'lunch anyone?', ago(30)));
  at(ago(20), slackMessage(CHANNEL, '', 'deploy 505 verified', ago(20), undefined, true));

  at(day(0, 8), jiraSprint(6, 'Sprint 6', 'closed', day(-14, 8), day(0, 8), day(0, 8)));
  at(day(0, 9), jiraSprint(7, 'Sprint 7', 'active', day(0, 9), day(14, 9), day(0, 9)));
  at(day(0, 10), jiraIssue('PAY-1', 'To Do', day(0, 10)));
  at(day(1, 10), jiraIssue('PAY-1', 'In Progress', day(1, 10), 'To Do'));
  at(day(2, 10), jiraIssue('PAY-1', 'Done', day(2, 10), 'In Progress'));
  at(day(1, 11), jiraIssue('PAY-2', 'To Do', day(1, 11)));
  at(day(3, 11), jiraIssue('PAY-2', 'In Progress', day(3, 11), 'To Do'));
  at(day(2, 12), jiraIssue('PAY-3', 'To Do', day(2, 12)));
  at(day(3, 12), jiraIssue('PAY-4', 'To Do', day(3, 12)));
  at(day(4, 12), jiraIssue('PAY-4', 'Done', day(4, 12), 'To Do'));
  at(day(4, 13), jiraIssue('PAY-5', 'To Do', day(4, 13)));
  at(day(5, 13), jiraIssue('PAY-5', 'In Progress', day(5, 13), 'To Do'));
  at(day(6, 13), jiraIssue('PAY-5', 'Done', day(6, 13), 'In Progress'));
  at(day(3, 17), jiraVersion(10, 'v1.4', true, day(3, 17), day(3, 17)));
  at(day(4, 9), jiraVersion(11, 'v1.5', false, day(10, 9), day(4, 9)));

  return events.sort((a, b) => a[0] - b[0]).map(([, d]) => d);
};
