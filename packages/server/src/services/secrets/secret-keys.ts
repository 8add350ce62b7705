import { ServiceError } from '../../domain/errors.ts';
import type { RecordStore } from '../../ports/records.ts';
import type { ServiceDeps } from '../context.ts';
import { SecretBox } from './secret-box.ts';

/** One record noting that sealed secrets exist, and the key that sealed the newest. */
const MARKER = { collection: 'secrets', id: 'connector-secrets' } as const;

const boxes = new WeakMap<object, SecretBox | null>();

/** The box for this configuration, or null when CAIRN_SECRET_KEY is not set. */
export const secretBoxOf = (config: ServiceDeps['config']): SecretBox | null => {
  if (!boxes.has(config)) boxes.set(config, config.secretKey ? new SecretBox(config.secretKey, config.secretKeyPrevious) : null);
  return boxes.get(config) ?? null;
};

/** The box, or a clear refusal: signing secrets are never stored in plain text. */
export const requireSecretBox = (config: ServiceDeps['config']): SecretBox => {
  const box = secretBoxOf(config);
  if (!box) {
    throw new ServiceError('CONFLICT', 'connector signing secrets are stored encrypted: set CAIRN_SECRET_KEY (the same on every replica) and restart, then try again');
  }
  return box;
};

/** Note that a secret was sealed with `box`'s key, for the start-up check. */
export const noteSealed = (records: RecordStore, box: SecretBox): Promise<void> =>
  records.putRecord(MARKER.collection, MARKER.id, { kid: box.keyId });

export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/**
 * At start: once sealed secrets exist, refuse to run without a key that opens them, rather
 * than answer every webhook 503 later.
 */
export const checkSecretKey = async (records: RecordStore, config: ServiceDeps['config']): Promise<void> => {
  const marker = await records.getRecord(MARKER.collection, MARKER.id);
  if (!marker) return;
  const box = secretBoxOf(config);
  const kid = String(marker.data.kid ?? '');
  if (!box) {
    throw new SecretKeyError('connector signing secrets are stored encrypted, and CAIRN_SECRET_KEY is not set: set it to the key they were stored with (see README, "Secrets at rest")');
  }
  if (!box.knows(kid)) {
    throw new SecretKeyError(
      'CAIRN_SECRET_KEY does not open the stored connector signing secrets: set it to the key they were stored with, or to rotate, set the new key in CAIRN_SECRET_KEY and the old one in CAIRN_SECRET_KEY_PREVIOUS',
    );
  }
};
