import type { MappedWrite } from '../connector.ts';
import type { PushEvent, ReleaseEvent } from './payloads.ts';
import { repoPath, subjectOf } from './repo-path.ts';
import { clipText } from '../../domain/clip-text.ts';

/** Commits a push entry lists; GitHub itself sends at most 20 per push event. */
const MAX_COMMITS = 50;
/** Release notes kept in the entry; the rest is on GitHub. */
const NOTES_CHARS = 8000;

/** A published release → `release-<id>`: tag, name, target, author, notes, when. */
export const releaseWrite = (e: ReleaseEvent): MappedWrite | string => {
  if (e.action !== 'published') return `GitHub release ${e.action.slice(0, 32)} is not captured (only published releases are)`;
  const r = e.release;
  return {
    entity_path: repoPath(e.repository),
    key: `release-${r.id}`,
    event_type: 'release.published',
    confidence: 1,
    value: {
      kind: 'release', id: r.id, tag: r.tag_name, name: r.name ?? r.tag_name, target: r.target_commitish ?? null,
      prerelease: r.prerelease ?? false, author: r.author?.login ?? null, url: r.html_url ?? null,
      notes: r.body ? clipText(r.body, NOTES_CHARS) : null, created_at: r.created_at ?? null, published_at: r.published_at ?? null,
    },
  };
};

/**
 * A push to the default branch → `push-<after sha>`: the commits with their authors, who
 * pushed, and the compare link. Pushes to other branches, tags and branch deletions are
 * not the branch's history, so they are not captured.
 */
export const pushWrite = (e: PushEvent): MappedWrite | string => {
  const branch = e.ref.startsWith('refs/heads/') ? e.ref.slice('refs/heads/'.length) : null;
  const main = e.repository.default_branch ?? null;
  if (branch === null || main === null || branch !== main) {
    return `GitHub push to ${e.ref.slice(0, 64)} is not captured (only pushes to the default branch${main ? ` ${main.slice(0, 64)}` : ''} are)`;
  }
  if (e.deleted) return `GitHub push deleting ${branch.slice(0, 64)} is not captured`;
  const commits = (e.commits ?? []).slice(-MAX_COMMITS).map((c) => ({
    sha: c.id, message: subjectOf(c.message), author: c.author?.username ?? c.author?.name ?? null, url: c.url ?? null, at: c.timestamp ?? null,
  }));
  return {
    entity_path: repoPath(e.repository),
    key: `push-${e.after}`,
    event_type: e.forced ? 'push.forced' : 'push',
    confidence: 1,
    value: {
      kind: 'push', branch, before: e.before ?? null, after: e.after, forced: e.forced ?? false, pusher: e.pusher?.name ?? null,
      compare: e.compare ?? null, commit_count: e.commits?.length ?? 0, commits,
      authors: [...new Set(commits.map((c) => c.author).filter((a): a is string => a !== null))],
      pushed_at: e.head_commit?.timestamp ?? commits.at(-1)?.at ?? null,
    },
  };
};
