import type { Entry, EntryValue } from '../domain/entry.ts';
import type { SearchIndex } from '../ports/search-index.ts';
import { yieldTurns } from '../event-loop.ts';
import type { ServiceDeps } from './context.ts';
import { searchEntries } from './search-entries.ts';
import { nextVersion, requireStorableValue } from './write-entry.ts';

/**
 * Searches a server makes over MEMORIES, in an index of their own, once it listens, each in a
 * turn of its own. V8 compiles a search's code as it runs it: in a fresh process the first
 * dozen searches took several times as long as later ones (a conversation of 216 turns, its
 * 14 questions asked once each in a new server: p90 about 20 ms cold, 10 ms after these, 2.5 ms
 * asked again), and a server that restarts on every deploy, or one an MCP client starts for a
 * session, meets them again each time.
 */
export const WARM_SEARCHES = 24;

/** A few memories of the shapes agents and connectors write: text, JSON, tags, a conversation's turns. */
const MEMORIES: [string, string, EntryValue, string[]][] = [
  ['services/checkout', 'incident-2291', { title: 'Checkout latency above 2 s', status: 'resolved', cause: 'connection pool exhausted after the PgBouncer upgrade', fix: 'rolled back to 1.21' }, ['incident', 'database']],
  ['services/checkout', 'deploy-3.4.1', 'Deployed checkout 3.4.1 to production; canary at 5 % for an hour, no errors, then promoted.', ['deploy']],
  ['repos/acme/api', 'pr-42', { title: 'Retry webhook deliveries with backoff', state: 'merged', author: 'maya', files: ['src/webhooks/retry.ts'] }, ['pull-request']],
  ['repos/acme/api', 'decision-queues', 'We chose Kafka over RabbitMQ for the event bus: replay matters more than per-message routing.', ['decision']],
  ['teams/platform', 'runbook-disk-full', 'When a node reports disk full: check the log volume, rotate logs, then expand the PVC; never delete the WAL.', ['runbook']],
  ['teams/platform', 'note-flaky-tests', 'The integration suite fails about one run in ten on the search tests; a timing issue, not a product bug.', []],
  ['projects/billing', 'ticket-BILL-311', { summary: 'Invoices show the wrong currency for EU customers', priority: 'high', assignee: 'tom' }, ['jira']],
  ['conversations/ana-lee', 'turn-0001', { speaker: 'Ana', date: '2025-03-02', text: 'I finally moved to Lisbon last month, the light there is wonderful.' }, []],
  ['conversations/ana-lee', 'turn-0002', { speaker: 'Lee', date: '2025-03-02', text: 'That sounds lovely! Are you still painting on weekends?' }, []],
  ['conversations/ana-lee', 'turn-0003', { speaker: 'Ana', date: '2025-04-11', text: 'Yes, and I started teaching a small watercolour class on Saturdays.' }, []],
];

const QUERIES: string[] = [
  'why was checkout slow',
  'what did we decide about the event bus?',
  'pgbouncer rollback',
  '"disk full"',
  'retry* webhooks',
  'When did Ana move to Lisbon?',
  'What does Ana do on weekends',
  'invoices currency bug for european customers',
  'flaky integration tests',
  'canary deploy promoted',
  'who merged the webhook retries',
  'what happened after the upgrade',
];

const CTX = { requestId: 'warm-up', namespace: 'default', agentId: 'cairn' };

/** The memories as first versions, made as a write makes them (write-entry.ts nextVersion), now. */
export const warmEntries = (now: number): Entry[] =>
  MEMORIES.map(([entity_path, key, value, tags]) => {
    const input = { entity_path, key, value, tags, confidence: 0.9 };
    const decision = nextVersion(CTX, { namespace: CTX.namespace, entity_path, key }, input, { head: null, live: null, now }, requireStorableValue(value));
    if (decision.kind === 'refuse') throw decision.error;
    return decision.entry;
  });

/**
 * Run WARM_SEARCHES searches over `index` (an index of warmEntries alone) with the server's own
 * search rules and embedder, yielding between them so that requests arriving meanwhile go
 * first. `stopped` ends it early (the server is closing). Answers how many ran, and how many
 * found something: a search that finds nothing leaves the ranking code cold.
 */
export const warmSearch = async (deps: ServiceDeps, index: SearchIndex, stopped: () => boolean): Promise<{ searches: number; answered: number }> => {
  const modes = ['hybrid', 'hybrid', 'text', 'vector'] as const;
  let searches = 0;
  let answered = 0;
  for (; searches < WARM_SEARCHES && !stopped(); searches++) {
    const mode = deps.embedder ? modes[searches % modes.length] : 'text';
    const { results } = await searchEntries({ ...deps, search: index }, CTX, { query: QUERIES[searches % QUERIES.length], mode, limit: 5 });
    if (results.length > 0) answered += 1;
    await yieldTurns();
  }
  return { searches, answered };
};
