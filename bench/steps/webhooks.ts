import { type WebhookBench, WARM_UP_SECONDS, benchWebhooks } from '../webhooks.ts';
import type { Step } from '../lib/step.ts';

export const webhooksStep: Step<WebhookBench> = {
  key: 'webhooks',
  title: () => `webhooks: signed GitHub pull_request deliveries, distinct delivery ids, 50 connections, measured after ${WARM_UP_SECONDS} s of the same load (filesystem, then PostgreSQL)`,
  async run(ctx) {
    const w = await benchWebhooks(ctx.seconds, (backend) => ctx.progress(`wrk, ${backend}`));
    const lines = [
      `  filesystem  ${w.ingest.rps} events/s (${w.payload_bytes} B payloads), p50 ${w.ingest.p50_ms} ms, p99 ${w.ingest.p99_ms} ms (goal ≥ 3000/s); non-2xx ${w.ingest.non2xx}`,
      `  PostgreSQL  ${w.ingest_postgres.rps} events/s, p50 ${w.ingest_postgres.p50_ms} ms, p99 ${w.ingest_postgres.p99_ms} ms; non-2xx ${w.ingest_postgres.non2xx}`,
    ];
    const failures = w.ingest.errors + w.ingest_postgres.errors;
    if (failures > 0) lines.push(`  WARNING: ${failures} socket errors or timeouts`);
    return { figures: w, lines };
  },
};
