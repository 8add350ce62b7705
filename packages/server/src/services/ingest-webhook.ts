import type { DeliveryOutcomeName } from 'cairn-memory-client';
import type { Connector, Delivery } from '../connectors/connector.ts';
import { connectorNamed } from '../connectors/registry.ts';
import { ERROR_STATUS, type ErrorCode, ServiceError } from '../domain/errors.ts';
import { requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { connectorState } from './connector-state.ts';
import { receiveDelivery, type WebhookOutcome } from './receive-delivery.ts';

export type { WebhookOutcome };

/**
 * Refusals of the delivery itself (counted and logged as rejected), with the status each is
 * answered; anything else is ours or the backend's. PAYLOAD_TOO_LARGE: a delivery that maps to
 * a value past the entry size limit, so a person sees why the provider keeps retrying it.
 */
const REFUSALS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['BAD_REQUEST', 'UNAUTHENTICATED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'VALIDATION_FAILED']);

interface Line {
  outcome: DeliveryOutcomeName;
  status: number;
  reason: string | null;
}

/** The log's words for what became of a delivery that was not refused. */
const lineOf = (outcome: WebhookOutcome): Line => {
  const where = (entries: Array<{ entity_path: string; key: string }>) => entries.map((e) => `${e.entity_path}/${e.key}`).join(', ');
  switch (outcome.outcome) {
    case 'written': {
      if (outcome.held) return { outcome: 'written', status: 202, reason: outcome.held };
      const made = outcome.entries.filter((e) => e.created);
      const same = outcome.entries.filter((e) => !e.created);
      // A late or repeated delivery under a new id (GitHub's by the object's updated_at, any
      // connector's whose update comes to the same content) is taken in but makes no version:
      // "stored" would send a person looking for a version that does not exist.
      if (made.length === 0 && same.length > 0) {
        return { outcome: 'unchanged', status: 202, reason: `no new version: ${where(same)} already held this state or a later one` };
      }
      const unchanged = same.length > 0 ? `; unchanged ${where(same)}` : '';
      return { outcome: 'written', status: 202, reason: made.length > 0 ? `stored ${where(made)}${unchanged}` : 'stored' };
    }
    case 'duplicate':
      return { outcome: 'duplicate', status: 200, reason: 'already received: a replay of this delivery id' };
    case 'ignored':
      return { outcome: 'ignored', status: 202, reason: outcome.reason };
    case 'reply':
      return { outcome: 'ignored', status: 200, reason: outcome.why };
  }
};

/**
 * One provider webhook: the connector must exist and be enabled (else NOT_FOUND, and nothing
 * is logged: it is not this connector's delivery), then receiveDelivery checks, maps and
 * stores it. Every delivery that reached an enabled connector is counted and logged with
 * what became of it — refusals too, with their reason — so a person setting up a webhook
 * sees why it failed.
 */
export const ingestWebhook = async (deps: ServiceDeps, ctx: Context, name: string, delivery: Delivery): Promise<WebhookOutcome> => {
  requireScope(ctx, 'write');
  const connector = connectorNamed(name);
  const state = await connectorState(deps, ctx.namespace, connector);
  if (!state.enabled || !state.secret) throw new ServiceError('NOT_FOUND', `the ${name} connector is not enabled`);
  const at = new Date(deps.now()).toISOString();
  // Named before it is received: the body's parsed document is dropped once it is mapped.
  const names = named(connector, delivery);
  const log = (line: Line) => {
    deps.deliveries.count(ctx.namespace, name, line.outcome === 'duplicate' ? 'duplicates' : line.outcome, at);
    return deps.deliveryLog.record(ctx.namespace, name, { at, ...names, ...line });
  };
  try {
    return await receiveDelivery(deps, ctx, connector, state.secret, state.settings, delivery, (outcome) => log(lineOf(outcome)));
  } catch (error) {
    if (error instanceof ServiceError && REFUSALS.has(error.code)) await log({ outcome: 'rejected', status: ERROR_STATUS[error.code], reason: error.message });
    throw error;
  }
};

const named = (connector: Connector, delivery: Delivery): { event: string | null; delivery_id: string | null } => {
  const { event, deliveryId } = connector.peek(delivery);
  return { event, delivery_id: deliveryId };
};
