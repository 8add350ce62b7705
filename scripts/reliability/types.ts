import type { describeMachine } from '../../bench/lib/machine.ts';

/** One reliability check: what it tried, what was lost (goal: nothing), and whether it passed. */
export interface ReliabilityCheck {
  name: string;
  tried: string;
  lost: number;
  ok: boolean;
  /** Lines worth reading: the failures, or what the check printed. */
  details: string[];
  seconds: number;
}

export interface SoakMinute {
  minute: number;
  requests: number;
  errors: number;
  p99_ms: { write: number; read: number; search: number; webhook: number };
  rss_mib: number;
}

export interface SoakFigures {
  minutes: number;
  /** Requests per second offered, per kind (a steady open-loop schedule, not flat out). */
  rates: { write: number; read: number; search: number; webhook: number };
  per_minute: SoakMinute[];
  rss_first_minute_mib: number;
  rss_last_minute_mib: number;
  acknowledged_writes: number;
  lost_writes: number;
  errors: number;
}

export interface ReliabilityResults {
  machine: ReturnType<typeof describeMachine>;
  checks: ReliabilityCheck[];
  soak?: SoakFigures;
}
