/**
 * A failed deploy of repos/acme/checkout, then three PagerDuty incidents P1–P3 on service
 * "checkout" within two hours of it (three deploy → incident traces and a recurring_incidents
 * pattern), and a note at people/alice. P1's title carries `word`, so a test can look for it
 * in everything the Cortex answers.
 */
type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

const ago = (ms: number): string => new Date(Date.now() - ms).toISOString();

export const seedIncidents = async (call: Call, word: string): Promise<void> => {
  const writes = [
    { entity_path: 'repos/acme/checkout', key: 'deployment-1', value: { id: 1, environment: 'production', state: 'failure', sha: 'abcdef1234', created_at: ago(60 * 60_000) } },
    { entity_path: 'incidents/pagerduty/checkout', key: 'incident-P1', value: { id: 'P1', title: `${word} database password leaked`, status: 'triggered', service: { name: 'checkout' }, triggered_at: ago(30 * 60_000) } },
    { entity_path: 'incidents/pagerduty/checkout', key: 'incident-P2', value: { id: 'P2', title: 'checkout latency', status: 'triggered', service: { name: 'checkout' }, triggered_at: ago(20 * 60_000) } },
    { entity_path: 'incidents/pagerduty/checkout', key: 'incident-P3', value: { id: 'P3', title: 'checkout errors', status: 'triggered', service: { name: 'checkout' }, triggered_at: ago(10 * 60_000) } },
    { entity_path: 'people/alice', key: 'note', value: { summary: 'alice stays here' } },
  ];
  for (const body of writes) {
    const res = await call('POST', '/api/v1/entries', body);
    if (res.status !== 201) throw new Error(`seed write failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
};

export const P1 = { entity_path: 'incidents/pagerduty/checkout', key: 'incident-P1' } as const;

/** Everything the Cortex answers, as one string: traces, digests, patterns, briefings. */
export const cortexAnswers = async (call: Call): Promise<string> =>
  JSON.stringify(
    await Promise.all(
      ['/api/v1/traces', '/api/v1/cortex/digests?limit=500', '/api/v1/patterns', '/api/v1/briefing?max_chars=200000', '/api/v1/briefing?entity_path=incidents&max_chars=200000'].map(
        async (path) => (await call('GET', path)).body,
      ),
    ),
  );

export const traceIds = async (call: Call): Promise<string[]> => ((await call('GET', '/api/v1/traces')).body.traces ?? []).map((t: { id: string }) => t.id).sort();

export const digestScopes = async (call: Call): Promise<string[]> => ((await call('GET', '/api/v1/cortex/digests?limit=500')).body.digests ?? []).map((d: { scope: string }) => d.scope).sort();
