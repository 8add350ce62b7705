import type { EntryEvidence } from 'cairn-memory-client';

const LABEL: Record<EntryEvidence['status'], string> = {
  untested: 'untested',
  validated: 'validated',
  contested: 'contested',
  discredited: 'discredited',
};

/** What recorded outcomes say about an entry, with the counts behind it on hover. */
export const Evidence = ({ evidence }: { evidence: EntryEvidence | undefined }) => {
  // Entries held by an older server carry no evidence: show nothing rather than guess.
  if (!evidence) return null;
  const { status, successes, failures } = evidence;
  return (
    <span class={`pill evidence ${status}`} title={`evidence from outcomes: ${successes} worked, ${failures} failed`}>
      {LABEL[status]}
      {status !== 'untested' && ` ${successes}✓ ${failures}✗`}
    </span>
  );
};
