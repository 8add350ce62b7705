import type { Delivery } from '../connectors/connector.ts';
import { connectorNamed } from '../connectors/registry.ts';
import { sha256 } from '../domain/content-hash.ts';
import { ServiceError } from '../domain/errors.ts';
import { requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { connectorState } from './connector-state.ts';
import { type DeliveredEntry, deliverWrites } from './deliver-writes.ts';

/**
 * What became of one delivery; the transport decides how to answer it (HTTP: SPEC §5, §7).
 * Refusals (disabled connector, wrong media type, failed signature, malformed payload) are
 * ServiceErrors, like every other service's.
 */
export type WebhookOutcome =
  /** Stored for the first time under its delivery id. */
  | { outcome: 'written'; entries: DeliveredEntry[] }
  /** Seen before (a replay, or a concurrent delivery of the same id that got there first). */
  | { outcome: 'duplicate'; entries: DeliveredEntry[] }
  /** Verified but maps to no entry (an unmonitored channel, an event type not captured). */
  | { outcome: 'ignored'; reason: string }
  /** The provider expects this answer instead (Slack url_verification, pings). */
  | { outcome: 'reply'; body: Record<string, unknown> };

/** Delivery ids are the provider's; bound them so no header can bloat a record id. */
const dedupId = (deliveryId: string): string => (deliveryId.length <= 200 ? deliveryId : `sha256:${sha256(deliveryId)}`);

/**
 * One provider webhook: the connector must exist and be enabled (else NOT_FOUND), the
 * provider's signature must verify over the raw bytes (else UNAUTHENTICATED, nothing
 * written), then the mapped writes are stored once per delivery id — a replay, from any
 * replica or after a restart, is a `duplicate` and writes nothing.
 */
export const ingestWebhook = async (deps: ServiceDeps, ctx: Context, name: string, delivery: Delivery): Promise<WebhookOutcome> => {
  requireScope(ctx, 'write');
  const connector = connectorNamed(name);
  const state = await connectorState(deps, ctx.namespace, connector);
  if (!state.enabled || !state.secret) throw new ServiceError('NOT_FOUND', `the ${name} connector is not enabled`);
  const mediaType = (delivery.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const accepted = connector.contentTypes ?? ['application/json'];
  if (!accepted.includes(mediaType)) {
    throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', `${name} deliveries must be ${accepted.join(' or ')}, not "${mediaType.slice(0, 64) || 'none'}"`);
  }
  const at = new Date(deps.now()).toISOString();
  const count = (outcome: 'written' | 'duplicates' | 'ignored' | 'rejected') => deps.deliveries.count(ctx.namespace, name, outcome, at);
  const failure = connector.verify(delivery, state.secret);
  if (failure) {
    count('rejected');
    throw new ServiceError('UNAUTHENTICATED', `signature check failed: ${failure}`);
  }

  const outcome = connector.handle(delivery, state.settings);
  if (outcome.kind === 'reply') return { outcome: 'reply', body: outcome.body };
  if (outcome.kind === 'ignored') {
    count('ignored');
    return { outcome: 'ignored', reason: outcome.reason };
  }

  const collection = `dedup/${ctx.namespace}/${name}`;
  const id = dedupId(outcome.deliveryId);
  const seen = await deps.store.getRecord(collection, id);
  if (seen) {
    count('duplicates');
    return { outcome: 'duplicate', entries: (seen.data.entries as DeliveredEntry[]) ?? [] };
  }
  // Write first, then mark the delivery: a crash in between means the provider's retry
  // writes again, and identical content makes no new version — nothing is ever lost.
  const written = await deliverWrites(deps, ctx, name, { connector: name, delivery_id: outcome.deliveryId }, outcome.writes);
  const entries = written.map(({ entry, created }) => ({ entity_path: entry.entity_path, key: entry.key, version: entry.version, created }));
  const first = await deps.store.createRecord(collection, id, { entries, at: new Date(deps.now()).toISOString() });
  count(first ? 'written' : 'duplicates');
  return { outcome: first ? 'written' : 'duplicate', entries };
};
