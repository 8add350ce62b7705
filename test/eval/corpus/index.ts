import { chats } from './chats.ts';
import { conversations } from './conversations.ts';
import { decisions } from './decisions.ts';
import { deploys } from './deploys.ts';
import { incidents } from './incidents.ts';
import { kinds } from './kinds.ts';
import { type EvalEntry, type EvalQuery, random } from './model.ts';
import { notes } from './notes.ts';
import { pullRequests } from './pull-requests.ts';
import { runbooks } from './runbooks.ts';
import { tickets } from './tickets.ts';

export type { ConversationKind, EvalEntry, EvalQuery, KindsKind, QueryKind } from './model.ts';

/**
 * The evaluation corpus: an engineering organisation's operations memory (incidents, pull
 * requests, deployments, chat threads, tickets, runbooks, decisions, agent notes; strings and
 * JSON objects), with queries and the entries that answer them. Deterministic.
 */
export const buildCorpus = (): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const rand = random(20261121);
  const parts = [incidents(rand), pullRequests(rand), deploys(rand), chats(rand), tickets(rand), runbooks(rand), decisions(rand), notes()];
  return { entries: parts.flatMap((p) => p.entries), queries: parts.flatMap((p) => p.queries) };
};

/** The conversational set: long multi-session chats, one entry per turn (corpus/conversations.ts). */
export const buildConversations = (): { entries: EvalEntry[]; queries: EvalQuery[] } => conversations();

/**
 * The set of other kinds of memory (corpus/kinds.ts): its memories among the operations set's
 * entries, which share their services, people and words; only its own queries are asked.
 */
export const buildKinds = (): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const own = kinds();
  return { entries: [...buildCorpus().entries, ...own.entries], queries: own.queries };
};
