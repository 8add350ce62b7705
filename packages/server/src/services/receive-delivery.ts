import { deliveryDedupCollection, noteDedupCollection } from './retention/dedup-collections.ts';
import { type Connector, type ConnectorSettings, type Delivery, mediaTypeOf } from '../connectors/connector.ts';
import { forgetDocument } from '../connectors/parse-json.ts';
import { sha256 } from '../domain/content-hash.ts';
import { ServiceError } from '../domain/errors.ts';
import type { Context, ServiceDeps } from './context.ts';
import { claimOnce, completeClaim, releaseClaim } from './claim-once.ts';
import { hold, learn, recall, release } from './connector-memory.ts';
import { type DeliveredEntry, deliverWrites } from './deliver-writes.ts';

/**
 * What became of one delivery; the transport decides how to answer it (HTTP: SPEC §5, §7).
 * Refusals (wrong media type, failed signature, malformed payload) are ServiceErrors, like
 * every other service's.
 */
export type WebhookOutcome =
  /** Stored for the first time under its delivery id; `held`: kept until its object is known. */
  | { outcome: 'written'; entries: DeliveredEntry[]; held?: string }
  /** Seen before (a replay, or a concurrent delivery of the same id that got there first). */
  | { outcome: 'duplicate'; entries: DeliveredEntry[] }
  /** Verified but maps to no entry (an unmonitored channel, an event type not captured). */
  | { outcome: 'ignored'; reason: string }
  /** The provider expects this answer instead (Slack url_verification, pings); `why` for the log. */
  | { outcome: 'reply'; body: Record<string, unknown>; why: string };

/** Delivery ids are the provider's; bound them so no header can bloat a record id. */
const dedupId = (deliveryId: string): string => (deliveryId.length <= 200 ? deliveryId : `sha256:${sha256(deliveryId)}`);

/**
 * A delivery whose event does not have the provider's shape is malformed: SPEC §7 answers it
 * 400 with the reason. The connectors check payloads with the same schemas and messages as
 * request bodies (VALIDATION_FAILED, naming each bad field); the fields are kept as details.
 */
const malformedIsBadRequest = <T>(handle: () => T): T => {
  try {
    return handle();
  } catch (error) {
    if (!(error instanceof ServiceError) || error.code !== 'VALIDATION_FAILED') throw error;
    throw new ServiceError('BAD_REQUEST', `malformed event: ${error.message}`, { details: error.details });
  }
};

/**
 * Check, map and store one delivery to an enabled connector: the media type, then the
 * provider's signature over the raw bytes (else UNAUTHENTICATED, nothing written), then the
 * mapped writes, once per delivery id — a replay, from any replica or after a restart, is a
 * `duplicate` and writes nothing. `logged` records what became of it (refusals are thrown
 * to the caller instead), before it is answered: a stored delivery's line is written beside
 * its completed claim, not after it, so that the two share a round trip (on the filesystem,
 * one fsync where they took two in a row, of the four a delivery waited for).
 */
export const receiveDelivery = async (
  deps: ServiceDeps,
  ctx: Context,
  connector: Connector,
  secret: string,
  settings: ConnectorSettings,
  delivery: Delivery,
  logged: (outcome: WebhookOutcome) => Promise<void>,
): Promise<WebhookOutcome> => {
  const answered = async (outcome: WebhookOutcome): Promise<WebhookOutcome> => {
    await logged(outcome);
    return outcome;
  };
  const { name } = connector;
  const mediaType = mediaTypeOf(delivery);
  const accepted = connector.contentTypes ?? ['application/json'];
  if (!accepted.includes(mediaType)) {
    throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', `${name} deliveries must be ${accepted.join(' or ')}, not "${mediaType.slice(0, 64) || 'none'}"`);
  }
  const failure = connector.verify(delivery, secret);
  if (failure) throw new ServiceError('UNAUTHENTICATED', `signature check failed: ${failure}`);

  const recalled = await recall(deps.store, ctx.namespace, name, connector.wants?.(delivery));
  const outcome = malformedIsBadRequest(() => connector.handle(delivery, settings, recalled));
  // Mapped: nothing reads the body's parsed document again (parse-json.ts).
  forgetDocument(delivery.body);
  if (outcome.kind === 'reply') return answered({ outcome: 'reply', body: outcome.body, why: outcome.why });
  if (outcome.kind === 'ignored') return answered({ outcome: 'ignored', reason: outcome.reason });

  const collection = deliveryDedupCollection(ctx.namespace, name);
  const id = dedupId(outcome.deliveryId);
  // Claimed before writing, so a delivery the provider sends twice at once (a retry after a
  // timeout, reaching another replica) writes once and the other copy answers its entries.
  await noteDedupCollection(deps.store, collection);
  const { claim, seen } = await claimOnce(deps.store, deps.now, collection, id);
  if (seen) return answered({ outcome: 'duplicate', entries: (seen.entries as DeliveredEntry[] | undefined) ?? [] });
  let entries: DeliveredEntry[] = [];
  try {
    if (outcome.kind === 'held') {
      await hold(deps.store, ctx.namespace, name, outcome.object, outcome.item);
    } else {
      const written = await deliverWrites(deps, ctx, name, { connector: name, delivery_id: outcome.deliveryId }, outcome.writes);
      entries = written.map(({ entry, created }) => ({ entity_path: entry.entity_path, key: entry.key, version: entry.version, created }));
      await learn(deps.store, ctx.namespace, name, outcome.learn ?? []);
      if (outcome.release) await release(deps.store, ctx.namespace, name, outcome.release.object, outcome.release.ids);
    }
  } catch (error) {
    // Some of the writes may have landed: the provider's retry does them again, and identical
    // content makes no new version.
    await releaseClaim(deps.store, claim);
    throw error;
  }
  const stored: WebhookOutcome = outcome.kind === 'held' ? { outcome: 'written', entries, held: outcome.reason } : { outcome: 'written', entries };
  await Promise.all([completeClaim(deps.store, claim, { entries, at: new Date(deps.now()).toISOString() }), logged(stored)]);
  return stored;
};
