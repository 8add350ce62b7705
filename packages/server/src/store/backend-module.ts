import type { Logger } from 'pino';
import type { z } from 'zod';
import type { BackendCapabilities, OpenBackend, PlaceWithoutData, SharedRecords } from '../ports/backend.ts';

/**
 * One backend as the configuration sees it, before anything is opened: its variables, how it
 * is selected, and how to open it. Each backend folder has one (`store/<name>/backend.ts`),
 * light enough to load always: the heavy parts (a database driver, the AWS SDK) are imported
 * by `open` only, so the filesystem default never loads them.
 */
export interface BackendModule<N extends string, E extends z.ZodRawShape, S> {
  readonly name: N;
  readonly capabilities: BackendCapabilities;
  /**
   * The environment variable whose presence selects this backend (`CAIRN_DB_DSN`), or null
   * for the default, used when no other is selected.
   */
  readonly selectedBy: string | null;
  /** The variables this backend reads, validated with every other setting at start. */
  readonly env: E;
  /** Its settings, from its parsed variables. */
  settings(env: z.output<z.ZodObject<E>>): S;
  open(settings: S, logger: Logger, options?: OpenOptions): Promise<OpenBackend>;
  /** The shared records alone; null when they live inside the one server process. */
  openSharedRecords(settings: S): Promise<SharedRecords | null>;
  /**
   * Where the settings name a place the backend can never open (a data directory that is a
   * file, or lies under one), what is wrong, in words naming the setting; null when it can
   * be opened or made, or the backend cannot tell. A configuration error: `cairn serve`,
   * `cairn import` and `cairn export` refuse it (exit 2) before opening anything.
   */
  unusablePlace?(settings: S): Promise<string | null>;
  /**
   * Where opening would make the backend's place anew rather than find it (a data directory
   * that does not exist is created empty), what is missing, in words; null when it is there,
   * or the backend cannot tell (a database or bucket is made by its own administration). An
   * export refuses such a place rather than write an empty archive that looks like a backup.
   */
  missingPlace?(settings: S): Promise<string | null>;
  /**
   * Where the place is there but holds none of this backend's data (an empty directory, or a
   * folder of other files), what it is, in words, and whether it is empty; null when it holds
   * the backend's data, or the backend cannot tell. Opening there would write the backend's
   * files into it: an export refuses such a place rather than write into a folder that is not
   * its, and an import refuses one that holds other files (an empty one is where a backup is
   * restored).
   */
  placeWithoutData?(settings: S): Promise<PlaceWithoutData | null>;
  /**
   * The directory on this machine the backend keeps its files in, when it has one (the
   * filesystem backend's data directory): an export's output there would overwrite them.
   */
  localDirectory?(settings: S): string;
}


/** What the caller will do with an opened backend, so that it can start on it early. */
export interface OpenOptions {
  /** Search will be opened: a backend that keeps a saved index may start loading it at once. */
  search?: boolean;
}

/** Declares a backend module, keeping its settings' type for the configuration's union. */
export const defineBackend = <N extends string, E extends z.ZodRawShape, S>(module: BackendModule<N, E, S>): BackendModule<N, E, S> => module;
