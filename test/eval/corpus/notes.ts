import type { EvalEntry, EvalQuery, QueryKind } from './model.ts';

// Notes agents keep for themselves: preferences, observations, facts about people and systems.
const NOTES: { text: string; lexical: string; keyword: string; para: string }[] = [
  { text: 'Alice prefers code reviews in the morning and wants small pull requests under 300 lines', lexical: 'Alice prefers small pull requests under 300 lines', keyword: 'alice review preferences', para: 'when does Alice like to look at changes and how big' },
  { text: 'The staging environment shares its Redis instance with the QA environment', lexical: 'staging shares Redis instance with QA', keyword: 'staging redis qa shared', para: 'pre-prod and the testers use the same cache box' },
  { text: 'Finance closes the books on the third business day of each month; avoid billing deploys then', lexical: 'finance closes the books third business day billing deploys', keyword: 'finance month close deploy freeze', para: 'when accounting does its monthly wrap-up we should not ship invoicing changes' },
  { text: 'The legacy FTP import from the warehouse partner runs at 04:00 UTC and takes 40 minutes', lexical: 'legacy FTP import warehouse partner 04:00 UTC', keyword: 'ftp import warehouse schedule', para: 'when the old file transfer from the logistics company happens' },
  { text: 'Customer Globex has a contractual 99.95 percent uptime SLA with service credits', lexical: 'Globex 99.95 percent uptime SLA service credits', keyword: 'globex sla', para: 'what availability did we promise that big client and what if we miss it' },
  { text: 'Dana is the only person with admin rights on the Apple developer account', lexical: 'Dana admin rights Apple developer account', keyword: 'apple developer account admin', para: 'who can manage the iOS store publishing' },
  { text: 'The search cluster runs Elasticsearch 8.11 with three master nodes in separate zones', lexical: 'Elasticsearch 8.11 three master nodes separate zones', keyword: 'elasticsearch cluster topology', para: 'what the lookup engine deployment looks like' },
  { text: 'Marketing sends the weekly newsletter on Tuesday at 09:00 which triples traffic for an hour', lexical: 'weekly newsletter Tuesday 09:00 triples traffic', keyword: 'newsletter traffic spike tuesday', para: 'why load jumps every week on that morning' },
  { text: 'Hiro maintains the Terraform modules and must approve changes to networking', lexical: 'Hiro maintains Terraform modules approve networking', keyword: 'terraform modules owner networking', para: 'who owns the infra code for the vpc' },
  { text: 'The payment provider sandbox resets test cards every Sunday night', lexical: 'payment provider sandbox resets test cards Sunday', keyword: 'payment sandbox test cards reset', para: 'why fake credit cards stop working after the weekend' },
  { text: 'Our support team works in CET and escalates to engineering through the support-escalations channel', lexical: 'support team CET escalates support-escalations channel', keyword: 'support escalation channel', para: 'how customer care hands problems over to developers' },
  { text: 'Old invoices before 2021 live in the archive bucket and are not searchable in the app', lexical: 'invoices before 2021 archive bucket not searchable', keyword: 'old invoices archive', para: 'where to find bills from several years ago' },
];

export const notes = (): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const entries: EvalEntry[] = [];
  const queries: EvalQuery[] = [];
  NOTES.forEach((n, i) => {
    const path = 'agents/ops-assistant/notes';
    const key = `note-${i + 1}`;
    entries.push({ entity_path: path, key, value: n.text, memory_type: 'observation', agent_id: 'ops-assistant', confidence: 0.8 });
    const kind: QueryKind = (['paraphrase', 'keyword', 'lexical'] as const)[i % 3] as QueryKind;
    queries.push({ query: kind === 'lexical' ? n.lexical : kind === 'keyword' ? n.keyword : n.para, kind, expected: [`${path}/${key}`] });
  });
  return { entries, queries };
};
