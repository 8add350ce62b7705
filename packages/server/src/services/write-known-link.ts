import type { KnownLink } from '../cortex/known-links.ts';
import type { Entry, EntryLink } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { appendVersion } from './append-version.ts';
import type { ServiceDeps } from './context.ts';
import { MAX_LINKS } from './schemas.ts';

const has = (entry: Entry, link: EntryLink): boolean =>
  (entry.links ?? []).some((l) => l.relation === link.relation && l.entity_path === link.entity_path && l.key === link.key);

/** Why a link is not written; thrown out of `decide` to stop appendVersion without a version. */
const SKIP = new ServiceError('NOT_FOUND', 'nothing to link');

/**
 * Add `link` to the live head of `from` in `namespace` (both come from one namespace's
 * digests, so a link never crosses namespaces). The new version restates the head — value,
 * writer, confidence, evidence, expiry — with the link appended and `linked_by: "cortex"` in
 * its provenance; it goes through appendVersion, so a connector's write racing it is re-read
 * and kept. Idempotent: a head that already has the link, is gone, or is full makes no version,
 * so the change feed's recompile of this write ends here. A target that is later deleted
 * leaves the link dangling; the neighbours walk skips it. Returns whether a version was made.
 */
export const writeKnownLink = async (deps: Pick<ServiceDeps, 'store' | 'now'>, namespace: string, known: KnownLink): Promise<boolean> => {
  const address = { namespace, ...known.from };
  try {
    const { created } = await appendVersion(deps, address, ({ head, live, now }) => {
      if (!head || !live || has(live, known.link) || (live.links ?? []).length >= MAX_LINKS) {
        return live ? { kind: 'unchanged', entry: live } : { kind: 'refuse', error: SKIP };
      }
      return {
        kind: 'append',
        entry: {
          ...live,
          version: head.version + 1,
          written_at: new Date(now).toISOString(),
          provenance: { ...live.provenance, linked_by: 'cortex' },
          links: [...(live.links ?? []), known.link],
        },
      };
    });
    return created;
  } catch (error) {
    if (error === SKIP) return false;
    throw error;
  }
};
