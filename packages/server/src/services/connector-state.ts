import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { FreeTextSchema } from './schemas.ts';
import type { Connector, ConnectorSettings } from '../connectors/connector.ts';
import { ServiceError, unavailable } from '../domain/errors.ts';
import { type SealedSecret, type SecretBox, isSealed } from './secrets/secret-box.ts';
import { canonicalJson } from '../domain/content-hash.ts';
import { noteSealed, secretBoxOf } from './secrets/secret-keys.ts';
import { parseInput } from '../domain/parse-input.ts';
import type { ServiceDeps } from './context.ts';

/** Where a connector's switch and secret live: shared records, so every replica agrees. */
export const settingsCollection = (namespace: string): string => `connectors/${namespace}`;

/**
 * A settings record as `connectorState` reads it: a switch, its signing secret (plain, or
 * sealed with CAIRN_SECRET_KEY, secret-box.ts), and the connector's own lists. For data that
 * did not come through this file's writers (an import).
 */
export const ConnectorRecordSchema = z.object({
  enabled: z.boolean().optional(),
  secret: z.union([z.string(), z.object({ alg: z.literal('A256GCM'), kid: z.string(), iv: z.string(), tag: z.string(), ct: z.string() })]).optional(),
  enabled_at: z.string().optional(),
  rotated_at: z.string().optional(),
  channels: z.array(z.string()).optional(),
  projects: z.record(z.string(), z.string()).optional(),
});

export interface ConnectorState {
  enabled: boolean;
  secret: string | null;
  /** `config` when CAIRN_CONNECTOR_<NAME>_SECRET enables it: then the API cannot change it. */
  managedBy: 'config' | 'api' | null;
  settings: ConnectorSettings;
  enabled_at: string | null;
  /** When its secret was last rotated since it was enabled; null when it never was (or not on through the API). */
  rotated_at: string | null;
}

/** A new signing secret: 32 random bytes, URL-safe, as providers accept any string. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/**
 * Body of enable / rotate: providers that issue their own signing secret (PagerDuty, Slack)
 * need it given to Cairn; for the others Cairn generates one when none is given.
 */
export const SecretInput = z
  .object({ signing_secret: FreeTextSchema(512).min(16).optional().describe("The provider's signing secret, when the provider issues it (PagerDuty, Slack).") })
  .strict();

/** The signing secret a request body gives, if any; a body of another shape is refused (422). */
export const givenSecret = (raw: unknown): string | undefined => parseInput(SecretInput, raw ?? {}).signing_secret;

export const secretFor = (connector: Connector, given: string | undefined): string => {
  if (given) return given;
  if (connector.issuesOwnSecret) {
    throw new ServiceError('VALIDATION_FAILED', `${connector.title} issues its own signing secret: pass it as signing_secret`, {
      details: [{ field: 'signing_secret', message: `copy it from ${connector.title}` }],
    });
  }
  return newSecret();
};

/**
 * The plain secret of a record. Sealed with the previous key (a rotation) or stored in plain
 * text by an older version: sealed again with the current key, so the records converge on it.
 */
const openSecret = async (deps: ServiceDeps, collection: string, id: string, stored: string | SealedSecret): Promise<string> => {
  const box = secretBoxOf(deps.config);
  if (!isSealed(stored)) {
    if (box) await sealAgain(deps, box, collection, id, stored, stored);
    return stored;
  }
  const plain = box?.open(stored) ?? null;
  if (plain === null) throw unavailable(`the ${id} signing secret cannot be decrypted: CAIRN_SECRET_KEY is not the key it was stored with`);
  if (box?.isStale(stored)) await sealAgain(deps, box, collection, id, stored, plain);
  return plain;
};

/** Re-seals under way in this process, by store and record: concurrent readers share one. */
const sealing = new WeakMap<object, Map<string, Promise<void>>>();

/**
 * Seal `plain` with the current key over the record, only while the record still holds
 * `stored` and nothing else has changed (RecordStore.replaceRecord). Written unconditionally,
 * a re-seal racing a rotation or a disable on another replica undid it: the old secret
 * verified again, the new one was refused, a disabled connector got its secret back. Readers in
 * this process share one re-seal, so a burst of deliveries after a key rotation makes one write.
 */
const sealAgain = (deps: ServiceDeps, box: SecretBox, collection: string, id: string, stored: string | SealedSecret, plain: string): Promise<void> => {
  let mine = sealing.get(deps.store);
  if (!mine) sealing.set(deps.store, (mine = new Map()));
  const key = `${collection}\u0000${id}`;
  const running = mine.get(key);
  if (running) return running;
  const work = (async () => {
    const fresh = await deps.store.getRecord(collection, id);
    if (!fresh || canonicalJson(fresh.data.secret ?? null) !== canonicalJson(stored)) return;
    if (await deps.store.replaceRecord(collection, id, fresh.data, { ...fresh.data, secret: box.seal(plain) })) await noteSealed(deps.store, box);
  })().finally(() => mine.delete(key));
  mine.set(key, work);
  return work;
};

export const connectorState = async (deps: ServiceDeps, namespace: string, connector: Connector): Promise<ConnectorState> => {
  const fromConfig = deps.config.connectorSecrets[connector.name];
  const record = await deps.store.getRecord(settingsCollection(namespace), connector.name);
  const data = (record?.data ?? {}) as z.output<typeof ConnectorRecordSchema>;
  const settings: ConnectorSettings = {
    channels: connector.name === 'slack' && deps.config.slackChannels.length > 0 ? [...deps.config.slackChannels] : (data.channels ?? []),
    projects: data.projects ?? {},
  };
  if (fromConfig) return { enabled: true, secret: fromConfig, managedBy: 'config', settings, enabled_at: null, rotated_at: null };
  if (data.enabled && data.secret) {
    const secret = await openSecret(deps, settingsCollection(namespace), connector.name, data.secret);
    return { enabled: true, secret, managedBy: 'api', settings, enabled_at: data.enabled_at ?? null, rotated_at: data.rotated_at ?? null };
  }
  return { enabled: false, secret: null, managedBy: null, settings, enabled_at: null, rotated_at: null };
};

/** The plain secret of a settings record as read (sealed again with the current key if stale), or null when it is off. */
export const secretOf = async (deps: ServiceDeps, namespace: string, name: string, data: ConnectorRecord): Promise<string | null> =>
  data.enabled && data.secret ? openSecret(deps, settingsCollection(namespace), name, data.secret) : null;

export type ConnectorRecord = z.output<typeof ConnectorRecordSchema> & Record<string, unknown>;

/** Attempts of `changeConnectorRecord` before it gives up with 503 (each lost one re-reads). */
const CHANGE_ATTEMPTS = 16;

/**
 * Read a connector's settings record, compute its next data, and write it only while the record
 * still holds what was read (RecordStore.replaceRecord; createRecord when there is none); a
 * change made meanwhile — a disable, a rotation, settings, on this replica or another — is read
 * again and `next` computed over it, never overwritten. `next` answers null to write nothing.
 * Resolves the data written, or null when `next` wrote nothing. Written with putRecord, each of
 * these changes undid the others: a settings change turned a disabled connector back on, or
 * brought back the secret a rotation had replaced.
 */
export const changeConnectorRecord = async (
  deps: ServiceDeps,
  namespace: string,
  name: string,
  next: (data: ConnectorRecord) => ConnectorRecord | null | Promise<ConnectorRecord | null>,
): Promise<ConnectorRecord | null> => {
  const collection = settingsCollection(namespace);
  for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt++) {
    const read = await deps.store.getRecord(collection, name);
    const written = await next((read?.data ?? {}) as ConnectorRecord);
    if (written === null) return null;
    const done = read ? await deps.store.replaceRecord(collection, name, read.data, written) : await deps.store.createRecord(collection, name, written);
    if (done) return written;
    // Lost to another change: back off a little (jittered) so replicas racing do not collide again.
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 5 * (attempt + 1))));
  }
  throw unavailable(`the ${name} connector's settings kept changing while this change was written; try again`);
};
