import { type WebhookBench, benchWebhooks } from '../webhooks.ts';
import type { Step } from '../lib/step.ts';

export const webhooksStep: Step<WebhookBench> = {
  key: 'webhooks',
  title: () => 'webhooks: signed GitHub pull_request deliveries, distinct delivery ids, 50 connections (filesystem)',
  async run(ctx) {
    ctx.progress('wrk');
    const w = await benchWebhooks(ctx.seconds);
    return {
      figures: w,
      lines: [`  ${w.ingest.rps} events/s (${w.payload_bytes} B payloads), p99 ${w.ingest.p99_ms} ms (goal ≥ 3000/s); non-2xx ${w.ingest.non2xx}`],
    };
  },
};
