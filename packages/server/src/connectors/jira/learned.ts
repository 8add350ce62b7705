import type { Recollection, Remembered, Wants } from '../connector.ts';
import { objectOr, stringOr } from '../parse-json.ts';

/**
 * What Jira deliveries teach about its numeric ids: an issue names its project's id beside
 * its key, and an issue in a sprint names the sprint's board (Jira Cloud's sprint field, a
 * custom field holding `{id, name, state, boardId}` objects). Sprint and version events carry
 * only those ids, so what issues taught files them under the project key.
 */

/** Ids become record ids and settings keys: digits in practice, never anything else. */
const ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Boards one issue may teach: an issue sits in a handful of sprints at most. */
const MAX_BOARDS = 20;

export const projectFact = (id: string): string => `project-${id}`;
export const boardFact = (id: string): string => `board-${id}`;

const idOf = (value: unknown): string | null => {
  const id = typeof value === 'number' && Number.isInteger(value) ? String(value) : stringOr(value);
  return id !== null && ID.test(id) ? id : null;
};

/** The boards of the sprints an issue's fields name (any custom field shaped like Jira's sprint field). */
export const boardsOf = (fields: Record<string, unknown> | null): string[] => {
  const boards = new Set<string>();
  for (const [name, value] of Object.entries(fields ?? {})) {
    if (!name.startsWith('customfield_') || !Array.isArray(value)) continue;
    for (const item of value.slice(0, MAX_BOARDS)) {
      const sprint = objectOr(item);
      const board = idOf(sprint?.boardId);
      if (board !== null && sprint?.state !== undefined) boards.add(board);
    }
  }
  return [...boards].slice(0, MAX_BOARDS);
};

/** What a delivery needs recalled, read from its unvalidated body (ids only, bounded). */
export const jiraWants = (raw: Record<string, unknown> | null): Wants => {
  const event = stringOr(raw?.webhookEvent) ?? '';
  const facts: string[] = [];
  if (event.startsWith('jira:issue_')) {
    const fields = objectOr(objectOr(raw?.issue)?.fields);
    const project = idOf(objectOr(fields?.project)?.id);
    if (project) facts.push(projectFact(project));
    facts.push(...boardsOf(fields).map(boardFact));
  } else if (event.startsWith('sprint_')) {
    const board = idOf(objectOr(raw?.sprint)?.originBoardId);
    if (board) facts.push(boardFact(board));
  } else if (event.startsWith('jira:version_')) {
    const project = idOf(objectOr(raw?.version)?.projectId);
    if (project) facts.push(projectFact(project));
  }
  return { facts, held: [] };
};

/**
 * Facts an issue teaches that the connector did not know: its project id → key (a renamed
 * key replaces the old one), and each of its sprints' boards → the key, unless that board
 * was learned already (a board spanning projects keeps the first; settings can override).
 */
export const issueFacts = (projectId: string | null, key: string, boards: readonly string[], recalled: Recollection): Remembered[] => {
  const facts: Remembered[] = [];
  if (projectId !== null && ID.test(projectId) && recalled.facts.get(projectFact(projectId))?.key !== key) facts.push({ id: projectFact(projectId), data: { key } });
  for (const board of boards) if (!recalled.facts.has(boardFact(board))) facts.push({ id: boardFact(board), data: { key } });
  return facts;
};

/** The key a recalled fact names, if it is one. */
export const recalledKey = (recalled: Recollection, fact: string): string | null => stringOr(recalled.facts.get(fact)?.key);

/** Learned facts as the settings show them: the same "id" / "board-<id>" keys as `projects`. */
export const learnedProjects = (facts: readonly Remembered[]): Record<string, string> => {
  const shown: Record<string, string> = {};
  for (const fact of facts) {
    const key = stringOr(fact.data.key);
    if (key === null) continue;
    if (fact.id.startsWith('project-')) shown[fact.id.slice('project-'.length)] = key;
    else if (fact.id.startsWith('board-')) shown[fact.id] = key;
  }
  return shown;
};
