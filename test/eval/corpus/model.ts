/**
 * Shapes of the retrieval evaluation (test/eval/): a corpus of operations memory written the
 * way connectors and agents write it, and queries naming the entries that answer them.
 */
export interface EvalEntry {
  entity_path: string;
  key: string;
  value: string | Record<string, unknown>;
  tags?: string[];
  event_type?: string;
  confidence?: number;
  memory_type?: string;
  agent_id?: string;
}

/**
 * lexical: words taken from the entry; keyword: a few of its terms, as a person types into a
 * search box; paraphrase: the same need in other words (shares few words with the entry).
 */
export type QueryKind = 'lexical' | 'keyword' | 'paraphrase';
/** Questions of the conversational set (test/eval/corpus/conversations.ts). */
export type ConversationKind = 'fact' | 'when' | 'opinion' | 'two-turn';
/** Queries of the set of other kinds of memory (test/eval/corpus/kinds.ts). */
export type KindsKind = 'identifier' | 'question' | 'paraphrase';

export interface EvalQuery {
  query: string;
  kind: QueryKind | ConversationKind | KindsKind;
  /** `entity_path/key` of every entry that answers the query. */
  expected: string[];
  /** Entity path the question is asked within (one conversation), if any. */
  scope?: string;
}

/** One topic of a kind of entry: how the entry words it, and how someone asking might. */
export interface Topic {
  /** The wording inside the entry. */
  doc: string;
  /** Distinctive words from `doc` for keyword queries. */
  words: string;
  /** The same thing said differently, avoiding the entry's words where a person would. */
  para: string;
}

export interface Service {
  /** Name as systems write it (paths, repos). */
  id: string;
  /** What people call it in conversation. */
  spoken: string;
}

export const SERVICES: Service[] = [
  { id: 'checkout-api', spoken: 'checkout' },
  { id: 'payments-svc', spoken: 'payments' },
  { id: 'search-svc', spoken: 'search' },
  { id: 'auth-gateway', spoken: 'auth gateway' },
  { id: 'inventory-svc', spoken: 'inventory' },
  { id: 'notifications-worker', spoken: 'notifications' },
  { id: 'billing-jobs', spoken: 'billing' },
  { id: 'mobile-bff', spoken: 'mobile backend' },
  { id: 'recommendations', spoken: 'recommendations' },
  { id: 'ledger', spoken: 'ledger' },
  { id: 'shipping-svc', spoken: 'shipping' },
  { id: 'image-resizer', spoken: 'image resizer' },
  { id: 'analytics-pipeline', spoken: 'analytics pipeline' },
  { id: 'edge-proxy', spoken: 'edge proxy' },
  { id: 'user-profile', spoken: 'user profile' },
];

export const PEOPLE = ['alice', 'bob', 'chen', 'dana', 'emeka', 'farah', 'gus', 'hiro', 'ines', 'jonas', 'kemal', 'lena'];

/** Deterministic PRNG (mulberry32), so the corpus is the same on every run and machine. */
export const random = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

export const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;

/** `count` distinct (service, topic) pairs, spread over topics so each topic recurs on several services. */
export const pairs = <T>(rand: () => number, topics: readonly T[], count: number): { service: Service; topic: T; t: number }[] => {
  const out: { service: Service; topic: T; t: number }[] = [];
  const used = new Set<string>();
  for (let i = 0; out.length < count && i < count * 50; i++) {
    const t = i % topics.length;
    const s = Math.floor(rand() * SERVICES.length);
    if (used.has(`${t}/${s}`)) continue;
    used.add(`${t}/${s}`);
    out.push({ service: SERVICES[s] as Service, topic: topics[t] as T, t });
  }
  return out;
};
