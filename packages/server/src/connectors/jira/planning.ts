import type { ConnectorSettings, MappedWrite, Recollection } from '../connector.ts';
import { boardFact, projectFact, recalledKey } from './learned.ts';
import { type Fields, mergeEvent } from '../lifecycle.ts';
import { pathSegment } from '../parse-json.ts';
import type { SprintEvent, VersionEvent } from './payloads.ts';

/**
 * Sprints and versions name a board or a project by id, never by key. The connector's
 * settings map ids to keys (`projects`); a board may be mapped as "board-<id>" too, since
 * board and project ids are separate sequences and can collide. Without a mapping, what
 * earlier issue deliveries taught (learned.ts) names the key; else the id is the path.
 */
const projectFor = (settings: ConnectorSettings, recalled: Recollection, ref: { board: string } | { project: string }): { path: string; key: string | null } => {
  const map = settings.projects ?? {};
  const mapped = 'board' in ref ? (map[`board-${ref.board}`] ?? map[ref.board]) : map[ref.project];
  const learned = recalledKey(recalled, 'board' in ref ? boardFact(ref.board) : projectFact(ref.project));
  const key = typeof mapped === 'string' && mapped.trim() !== '' ? mapped : learned;
  if (key) return { path: `projects/jira/${pathSegment(key)}`, key };
  return { path: `projects/jira/${'board' in ref ? `board-${ref.board}` : ref.project}`, key: null };
};

const SPRINT_KINDS: Record<string, string> = { sprint_started: 'started', sprint_closed: 'closed' };
const VERSION_KINDS: Record<string, string> = { 'jira:version_created': 'created', 'jira:version_released': 'released' };

export const isSprintEvent = (name: string): boolean => Object.hasOwn(SPRINT_KINDS, name);
export const isVersionEvent = (name: string): boolean => Object.hasOwn(VERSION_KINDS, name);

/**
 * A sprint's entry: the latest event by Jira's clock wins, so a late "started" delivery
 * cannot reopen a closed sprint.
 */
export const sprintWrite = (e: SprintEvent, settings: ConnectorSettings, recalled: Recollection, eventId: string, at: string): MappedWrite => {
  const s = e.sprint;
  const project = projectFor(settings, recalled, { board: s.originBoardId });
  const snapshot: Fields = {
    id: s.id,
    name: s.name ?? null,
    state: s.state ?? null,
    goal: s.goal ?? null,
    start_date: s.startDate ?? null,
    end_date: s.endDate ?? null,
    complete_date: s.completeDate ?? null,
    created_date: s.createdDate ?? null,
    board_id: s.originBoardId,
    project_key: project.key,
  };
  return {
    entity_path: project.path,
    key: `sprint-${s.id}`,
    event_type: `sprint.${SPRINT_KINDS[e.webhookEvent] ?? 'updated'}`,
    confidence: 1,
    update: (current) => mergeEvent(current, { id: eventId, at, snapshot }),
  };
};

/** A version (release) entry, likewise ordered by Jira's clock. */
export const versionWrite = (e: VersionEvent, settings: ConnectorSettings, recalled: Recollection, eventId: string, at: string): MappedWrite => {
  const v = e.version;
  const project = projectFor(settings, recalled, { project: v.projectId });
  const snapshot: Fields = {
    id: v.id,
    name: v.name ?? null,
    description: v.description ?? null,
    released: v.released ?? e.webhookEvent === 'jira:version_released',
    archived: v.archived ?? null,
    overdue: v.overdue ?? null,
    start_date: v.startDate ?? null,
    release_date: v.releaseDate ?? null,
    project_id: v.projectId,
    project_key: project.key,
  };
  return {
    entity_path: project.path,
    key: `release-${v.id}`,
    event_type: `version.${VERSION_KINDS[e.webhookEvent] ?? 'updated'}`,
    confidence: 1,
    update: (current) => mergeEvent(current, { id: eventId, at, snapshot }),
  };
};
