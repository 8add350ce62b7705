/** Answers of the forget and retention admin routes (`/api/v1/admin/forget`, `/api/v1/admin/retention`). */

export interface ForgetRequest {
  entity_path: string;
  /** Only this entry at `entity_path`; absent: every entry at or under it. */
  key?: string;
  namespace?: string;
  /** For the audit log; never the forgotten content. */
  reason?: string;
}

export interface ForgetResult {
  forgotten: { namespace: string; entity_path: string; key: string }[];
  /** Cortex digests, patterns, traces and compile events removed with them. */
  derived_removed: number;
}

export interface RetentionPolicy {
  namespace: string;
  /** null: the whole namespace. */
  entity_path: string | null;
  keep_versions: number | null;
  keep_days: number | null;
  updated_at: string;
}

export interface RetentionPolicyRequest {
  entity_path?: string;
  namespace?: string;
  keep_versions?: number;
  keep_days?: number;
}

export interface RetentionRun {
  entries_checked: number;
  versions_dropped: number;
  dedup_expired: number;
  /** Audit batches older than `CAIRN_AUDIT_RETENTION_DAYS` (0 when that is 0, keep all). */
  audit_expired: number;
  compaction: { bytesBefore: number | null; bytesAfter: number | null; ms: number } | null;
  ms: number;
}
