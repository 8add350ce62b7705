import type { WithdrawnVersion } from './change-window.ts';

/** Plenty for the few versions forgets race; bounded so a replica's memory is too. */
const MEMORY = 10_000;

const idOf = (v: WithdrawnVersion): string => `${v.namespace}\u0000${v.entity_path}\u0000${v.key}\u0000${v.version}\u0000${v.written_at}`;

/**
 * The versions forgets deleted after their appends had succeeded (see S3Store.forget), as this
 * replica heard of them. A copy of one can still arrive after the notice: its change object,
 * or this replica's own append finishing late. It must not become a head again, since its
 * object is gone and nothing else would ever remove it from the index.
 */
export class WithdrawnVersions {
  private readonly ids = new Set<string>();

  add(version: WithdrawnVersion): void {
    this.ids.add(idOf(version));
    if (this.ids.size > MEMORY) this.ids.delete(this.ids.values().next().value as string);
  }

  has(version: WithdrawnVersion): boolean {
    return this.ids.size > 0 && this.ids.has(idOf(version));
  }
}
