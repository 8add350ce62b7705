import { pathSegment } from '../parse-json.ts';

/** Where a repository's entries go: `repos/<owner>/<repo>`. */
export const repoPath = (repo: { name: string; owner: { login: string } }): string =>
  `repos/${pathSegment(repo.owner.login)}/${pathSegment(repo.name)}`;

/** A commit message's first line, bounded: entries hold the gist, GitHub holds the rest. */
export const subjectOf = (message: string | null | undefined): string | null =>
  message == null ? null : (message.split('\n', 1)[0] ?? '').slice(0, 500);
