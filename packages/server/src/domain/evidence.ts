import type { EntryEvidence as Evidence, EvidenceStatus } from 'cairn-memory-client';

export type { Evidence, EvidenceStatus };

/**
 * The evidence rule. An entry's reliability is the chance that acting on it works, with a
 * uniform Beta(1, 1) prior updated by its recorded outcomes: after s successes and f failures
 * the estimate is (s + 1) / (s + f + 2). The status reads that estimate with a floor of proof:
 *
 * - untested:    no outcome recorded
 * - validated:   at least one success and an estimate ≥ 2/3  (1–0, 2–1 is not, 3–1 is)
 * - discredited: at least two failures and an estimate ≤ 1/3 (0–2, 1–3; one failure alone is not)
 * - contested:   anything else (0–1, 1–1, 2–2, 2–1 …): outcomes disagree or are too few
 *
 * Pure and deterministic, so every backend and every reader agrees, and the status stored with
 * a version is the one this rule gives for its counts.
 */
export const evidenceStatus = (successes: number, failures: number): EvidenceStatus => {
  if (successes + failures === 0) return 'untested';
  const estimate = (successes + 1) / (successes + failures + 2);
  if (failures >= 2 && estimate <= 1 / 3) return 'discredited';
  if (successes >= 1 && estimate >= 2 / 3) return 'validated';
  return 'contested';
};

export const UNTESTED: Evidence = Object.freeze({ successes: 0, failures: 0, status: 'untested' as const });

/** The evidence after one more outcome. */
export const withOutcome = (evidence: Evidence, outcome: 'success' | 'failure'): Evidence => {
  const successes = evidence.successes + (outcome === 'success' ? 1 : 0);
  const failures = evidence.failures + (outcome === 'failure' ? 1 : 0);
  return { successes, failures, status: evidenceStatus(successes, failures) };
};
