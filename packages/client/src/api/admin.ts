/**
 * Shapes of the admin API (`/api/v1/admin/…`, SPEC §5) that the server declares its own
 * records with: key scopes and teams.
 */

/** What a key may do: `admin` includes `read` and `write`; those two are separate (a webhook key may only write). */
export type Scope = 'read' | 'write' | 'admin';

export interface TeamRecord {
  name: string;
  /** Agent ids or people (free-form identities). */
  members: string[];
  created_at: string;
}
