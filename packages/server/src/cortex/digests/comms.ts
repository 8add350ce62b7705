import type { Entry } from '../../domain/entry.ts';
import { DAY_MS, type DigestTypeDef, DIGEST_LIMITS, type OpenItem, type TypedFacts } from '../digest-types.ts';
import { byTimeDesc, canonicalOrder, clipped, cut, ms, num, objOf, objects, str, strings, TEXT_CHARS, topCounts } from '../fields.ts';
import { type IncidentQuote, type IncidentRef, quoteIncident } from './incident-ref.ts';

export interface CommsFacts {
  messages: { total: number; last_24h: number; bots: number };
  /** Active: a reply (or the start, without replies) in the last 24 hours. */
  threads: { total: number; active: number };
  participants: { count: number; top: Array<{ user: string; messages: number }>; users: string[] };
  busiest_threads: Array<{ entity_path: string; key: string; replies: number; participants: number; last_reply_at: string | null }>;
  incident_threads: Array<{ entity_path: string; key: string; incident: IncidentQuote }>;
}

/** Words that look like PagerDuty incident ids (upper-case letters and digits). */
const TOKEN = /\b[A-Z0-9]{5,20}\b/g;
const mentionTokens = (text: string): string[] => [...new Set(text.match(TOKEN) ?? [])];

/**
 * Chat facts over the Slack shape (`msg-<ts>`, `bot-<ts>`, `thread-<ts>`): volume, active
 * threads, who takes part, the busiest threads, and threads whose parent message or replies
 * name an incident that is still unresolved (`openIncidents`, by PagerDuty id). `tokens`
 * collects every id-like word seen, so the worker can recompile this scope when an incident
 * with one of those ids opens or closes.
 */
const compileComms = (entries: Entry[], now: number, openIncidents: ReadonlyMap<string, IncidentRef>, tokens: Set<string>): TypedFacts => {
  const messagesByTs = new Map<string, Entry>();
  const authors: string[] = [];
  const users = new Set<string>();
  const facts: CommsFacts = {
    messages: { total: 0, last_24h: 0, bots: 0 }, threads: { total: 0, active: 0 },
    participants: { count: 0, top: [], users: [] }, busiest_threads: [], incident_threads: [],
  };
  const threads: Entry[] = [];
  for (const e of entries) {
    const v = objOf(e.value);
    if (v === null) continue;
    const isBot = e.key.startsWith('bot-');
    if ((e.key.startsWith('msg-') || isBot) && v.deleted !== true) {
      facts.messages.total += 1;
      if (isBot) facts.messages.bots += 1;
      if (now - (ms(v.posted_at) ?? ms(e.created_at) ?? 0) <= DAY_MS) facts.messages.last_24h += 1;
      const user = clipped(v.user, TEXT_CHARS.name);
      if (user && !isBot) {
        authors.push(user);
        users.add(user);
      }
      messagesByTs.set(String(v.ts ?? e.key.slice(4)), e);
    } else if (e.key.startsWith('thread-')) threads.push(e);
  }
  for (const t of threads) {
    const v = objOf(t.value) ?? {};
    facts.threads.total += 1;
    const last = str(v.last_reply_at) ?? str(v.started_at);
    if (now - (ms(last) ?? 0) <= DAY_MS) facts.threads.active += 1;
    for (const user of strings(v.participants)) users.add(cut(user, TEXT_CHARS.name));
    const parent = objOf(messagesByTs.get(String(v.thread_ts ?? t.key.slice(7)))?.value ?? null);
    const texts = [str(parent?.text) ?? '', ...objects(v.replies).map((r) => str(r.text) ?? '')];
    const named = mentionTokens(texts.join('\n'));
    for (const token of named) tokens.add(token);
    const incident = named.map((token) => openIncidents.get(token)).find((i) => i !== undefined);
    if (incident) {
      facts.incident_threads.push({ entity_path: t.entity_path, key: t.key, incident: quoteIncident(incident) });
    }
    facts.busiest_threads.push({ entity_path: t.entity_path, key: t.key, replies: num(v.reply_count) ?? 0, participants: strings(v.participants).length, last_reply_at: clipped(v.last_reply_at, TEXT_CHARS.name) });
  }
  // Standalone messages can name an incident too; they count toward the tokens only.
  for (const e of messagesByTs.values()) for (const token of mentionTokens(str(objOf(e.value)?.text) ?? '')) tokens.add(token);
  facts.busiest_threads = facts.busiest_threads.sort((a, b) => b.replies - a.replies || byTimeDesc<typeof a>((x) => x.last_reply_at)(a, b)).slice(0, 5);
  facts.participants = participantsOf(users, topCounts(authors, 10));
  const open_items: OpenItem[] = facts.incident_threads.slice(0, DIGEST_LIMITS.openItems).map((t) => ({
    kind: 'incident_thread', entity_path: t.entity_path, key: t.key, title: `thread about ${t.incident.id}: ${t.incident.title}`, status: t.incident.status,
    since: clipped(objOf(threads.find((x) => x.key === t.key)?.value ?? null)?.started_at, TEXT_CHARS.name), detail: { incident: t.incident },
  }));
  return { facts: { ...facts }, open_items, headline: headlineOf(facts) };
};

const participantsOf = (users: Set<string>, top: Array<[string, number]>): CommsFacts['participants'] => ({
  count: users.size,
  top: top.map(([user, messages]) => ({ user, messages })),
  users: [...users].sort().slice(0, 1000),
});

/**
 * Chat facts of several scopes as one, or of parts combined before: sums, every participant
 * and every author's count (cut to the first 1000 and the top 10 by finishComms), the 5
 * busiest threads and the first threads about open incidents (ties and firsts in canonicalOrder). Combining
 * combined parts in order gives what combining every scope at once gives.
 */
const combineComms = (all: CommsFacts[]): CommsFacts => {
  const users = new Set<string>();
  const authored = new Map<string, number>();
  const out: CommsFacts = { messages: { total: 0, last_24h: 0, bots: 0 }, threads: { total: 0, active: 0 }, participants: { count: 0, top: [], users: [] }, busiest_threads: [], incident_threads: [] };
  for (const f of all) {
    for (const k of ['total', 'last_24h', 'bots'] as const) out.messages[k] += f.messages[k];
    out.threads.total += f.threads.total;
    out.threads.active += f.threads.active;
    for (const u of f.participants.users) users.add(u);
    for (const t of f.participants.top) authored.set(t.user, (authored.get(t.user) ?? 0) + t.messages);
    out.busiest_threads.push(...f.busiest_threads);
    out.incident_threads.push(...f.incident_threads);
  }
  // Ties, and which threads about incidents are kept, by what they quote: the parts come in no canonical order.
  out.busiest_threads = out.busiest_threads.sort((a, b) => b.replies - a.replies || canonicalOrder(a, b)).slice(0, 5);
  out.incident_threads = out.incident_threads.sort(canonicalOrder).slice(0, DIGEST_LIMITS.openItems);
  out.participants = { count: users.size, top: [...authored].map(([user, messages]) => ({ user, messages })), users: [...users] };
  return out;
};

const finishComms = (f: CommsFacts): CommsFacts => ({
  ...f,
  participants: participantsOf(new Set(f.participants.users), [...f.participants.top].map((t): [string, number] => [t.user, t.messages]).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10)),
});

const headlineOf = (f: CommsFacts): string =>
  `${f.threads.active} active of ${f.threads.total} threads; ${f.messages.last_24h} messages in 24 h (${f.messages.total} in all); ${f.participants.count} participants` +
  (f.incident_threads.length > 0 ? `; ${f.incident_threads.length} threads about open incidents (${[...new Set(f.incident_threads.map((t) => t.incident.id))].join(', ')})` : '');

/** Chat digests (`comms/…`): compiled last, against the incidents open by then. */
export const COMMS = {
  type: 'comms',
  order: 4,
  compile: (entries, ctx) => compileComms(entries, ctx.now, ctx.openIncidents, ctx.tokens),
  rollup: {
    combine: (all) => ({ ...combineComms(all as unknown as CommsFacts[]) }),
    finish: (combined) => {
      const facts = finishComms(combined as unknown as CommsFacts);
      return { facts, headline: headlineOf(facts) };
    },
  },
  crossScope: false,
  timed: true,
  readsOpenIncidents: true,
  indexFacts: [],
} satisfies DigestTypeDef;
