import type { Logger } from 'pino';
import type { z } from 'zod';
import type { OpenBackend, PlaceWithoutData, SharedRecords } from '../ports/backend.ts';
import type { BackendModule, OpenOptions } from './backend-module.ts';
import { filesystemBackend } from './fs/backend.ts';
import { postgresBackend } from './postgres/backend.ts';
import { s3Backend } from './s3/backend.ts';

/**
 * Every backend Cairn can run on. The only list of them: a new backend is a folder under
 * store/ with its `backend.ts`, and one more entry here. Exactly one may have
 * `selectedBy: null`, the default.
 */
export const BACKENDS = [filesystemBackend, postgresBackend, s3Backend] as const;

type AnyBackend = (typeof BACKENDS)[number];

/** One backend's settings, tagged with its name. */
type StorageOf<M> = M extends BackendModule<infer N, z.ZodRawShape, infer S> ? Readonly<{ backend: N } & S> : never;

/** The configured backend's settings: a union discriminated by `backend`. */
export type StorageConfig = StorageOf<AnyBackend>;

/** Every backend's variables, for the configuration's schema. */
export const backendEnv = (): z.ZodRawShape => Object.assign({}, ...BACKENDS.map((b) => b.env));

/**
 * The backend the parsed variables select: the one whose selecting variable is set, else
 * the default. More than one selected is a configuration error, named by `refuse`.
 */
export const selectStorage = (env: Record<string, unknown>, refuse: (message: string) => never): StorageConfig => {
  const chosen = BACKENDS.filter((b) => b.selectedBy !== null && env[b.selectedBy] !== undefined);
  if (chosen.length > 1) {
    refuse(`${chosen.map((b) => b.selectedBy).join(' and ')} are both set; choose one backend`);
  }
  const module: AnyBackend = chosen[0] ?? (BACKENDS.find((b) => b.selectedBy === null) as AnyBackend);
  return Object.freeze({ backend: module.name, ...(module.settings as (env: unknown) => object)(env) }) as StorageConfig;
};

/** The module of the configured backend, typed for its own settings. */
const moduleOf = (storage: StorageConfig): BackendModule<string, z.ZodRawShape, StorageConfig> =>
  // The find matches names, so the module's settings are exactly `storage`'s member of the union.
  BACKENDS.find((b) => b.name === storage.backend) as unknown as BackendModule<string, z.ZodRawShape, StorageConfig>;

/** Open the configured backend: its store, and what lives beside it. */
export const openBackend = (storage: StorageConfig, logger: Logger, options: OpenOptions = {}): Promise<OpenBackend> => moduleOf(storage).open(storage, logger, options);

/** The configured backend's shared records alone, or null where they live inside one server process. */
export const openSharedRecords = (storage: StorageConfig): Promise<SharedRecords | null> => moduleOf(storage).openSharedRecords(storage);

/** What the configured backend can do, without opening it. */
export const capabilitiesOf = (storage: StorageConfig) => moduleOf(storage).capabilities;

/** What makes the configured backend's place one it can never open, in words, or null (BackendModule.unusablePlace). */
export const unusablePlaceOf = async (storage: StorageConfig): Promise<string | null> => (await moduleOf(storage).unusablePlace?.(storage)) ?? null;

/** What is missing where `storage` keeps its data, in words, or null (BackendModule.missingPlace). */
export const missingPlaceOf = async (storage: StorageConfig): Promise<string | null> => (await moduleOf(storage).missingPlace?.(storage)) ?? null;

/** The directory on this machine the configured backend keeps its files in, or null (BackendModule.localDirectory). */
export const localDirectoryOf = (storage: StorageConfig): string | null => moduleOf(storage).localDirectory?.(storage) ?? null;

/** What the configured backend's place is when it is there but holds none of its data, or null (BackendModule.placeWithoutData). */
export const placeWithoutDataOf = async (storage: StorageConfig): Promise<PlaceWithoutData | null> => (await moduleOf(storage).placeWithoutData?.(storage)) ?? null;

/** The backends that several processes can share, with the variable that selects each (for messages). */
export const sharedBackends = (): string[] =>
  BACKENDS.filter((b) => b.capabilities.sharedAcrossReplicas).map((b) => `${b.name} (${b.selectedBy ?? 'default'})`);
