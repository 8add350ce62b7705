/**
 * Shapes of the admin API (`/api/v1/admin/…`, SPEC §5) that the server declares its own
 * records with: key scopes, teams and audit events.
 */

/** What a key may do: `admin` includes `read` and `write`; those two are separate (a webhook key may only write). */
export type Scope = 'read' | 'write' | 'admin';

export interface TeamRecord {
  name: string;
  /** Agent ids or people (free-form identities). */
  members: string[];
  created_at: string;
}

/** One audited change, as `/api/v1/admin/audit` lists it. */
export interface AuditEvent {
  at: string;
  /** e.g. entry.written, key.created, connector.enabled. */
  action: string;
  /** Who acted: the managed key (null in open mode) and the agent id the caller gave. */
  actor: { key_id: string | null; agent_id: string };
  request_id: string;
  /** What was acted on: an entry address, a key id, a connector, a team. */
  target: Record<string, unknown>;
  /** What changed; never a secret. */
  changes?: Record<string, unknown>;
}
