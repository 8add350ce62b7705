import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import { MODEL_FILES } from './onnx-model.ts';
import { OnnxEmbedder } from './onnx-embedder.ts';

export interface LocalModelOptions {
  /** Where models fetched by id are kept, one folder each. */
  cacheDir: string;
  /** Base URL of a hub with Hugging Face's layout: `<hub>/<id>/resolve/main/<file>`. */
  hubUrl: string;
  logger: Logger;
}

/** `owner/name` as on Hugging Face; anything else is taken as a directory. */
const MODEL_ID = /^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/;
/** A model file is a few hundred MB at most at this size of model; the limit keeps a stall from hanging start for ever. */
const FILE_TIMEOUT_MS = 15 * 60_000;

const isDirectory = (path: string): Promise<boolean> => stat(path).then((s) => s.isDirectory(), () => false);

/** Scratch folders of downloads whose process is gone (killed mid-download): never used, so removed. */
const removeAbandoned = async (cached: string): Promise<void> => {
  const prefix = `${basename(cached)}.partial-`;
  const names = await readdir(dirname(cached)).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(prefix))) {
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = pid !== process.pid;
    } catch (error) {
      // EPERM: a live process of another user.
      alive = (error as NodeJS.ErrnoException).code === 'EPERM';
    }
    if (!alive) await rm(join(dirname(cached), name), { recursive: true, force: true });
  }
};

/** Fetch one file into `target`; false when the hub has no such file (404). */
const fetchFile = async (url: string, target: string): Promise<boolean> => {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(FILE_TIMEOUT_MS), redirect: 'follow' });
  } catch (error) {
    throw new Error(`cannot fetch ${url}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`);
  }
  if (response.status === 404) {
    await response.body?.cancel();
    return false;
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`the model hub answered ${response.status} for ${url}`);
  }
  await mkdir(dirname(target), { recursive: true });
  await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), createWriteStream(target)).catch((error: unknown) => {
    throw new Error(`the download of ${url} broke off: ${(error as Error).message}`);
  });
  const expected = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(expected) && !response.headers.get('content-encoding') && (await stat(target)).size !== expected) {
    throw new Error(`${url} was cut short (${(await stat(target)).size} of ${expected} bytes)`);
  }
  return true;
};

/** Download a model's files into `dir`: the tokenizer and one graph are required, the rest optional. */
const download = async (hubUrl: string, id: string, dir: string): Promise<void> => {
  const base = `${hubUrl.replace(/\/+$/, '')}/${id}/resolve/main`;
  if (!(await fetchFile(`${base}/${MODEL_FILES.tokenizer}`, join(dir, MODEL_FILES.tokenizer)))) {
    throw new Error(`the model hub has no ${MODEL_FILES.tokenizer} for ${id} (${base}/${MODEL_FILES.tokenizer} answered 404): is the id right, and is it a BERT-family sentence model?`);
  }
  let graph = false;
  for (const name of MODEL_FILES.graph) if (!graph) graph = await fetchFile(`${base}/${name}`, join(dir, name));
  if (!graph) throw new Error(`the model hub has no ONNX export of ${id} (looked for ${MODEL_FILES.graph.join(' and ')}); pick a model that ships one`);
  for (const name of MODEL_FILES.optional) await fetchFile(`${base}/${name}`, join(dir, name));
};

/**
 * The embedder CAIRN_EMBEDDINGS_MODEL names without CAIRN_EMBEDDINGS_URL: a model directory,
 * or a model id fetched once into the cache. A download goes to a scratch folder beside the
 * cache entry and is renamed into place only after the model has loaded from it, so no
 * half-downloaded or unusable model is ever taken from the cache; a failed one leaves nothing.
 */
export const openLocalModel = async (spec: string, options: LocalModelOptions): Promise<OnnxEmbedder> => {
  const path = resolve(spec.startsWith('~/') ? join(homedir(), spec.slice(2)) : spec);
  if (await isDirectory(path)) return OnnxEmbedder.open(path, basename(path));
  if (!MODEL_ID.test(spec)) throw new Error(`CAIRN_EMBEDDINGS_MODEL=${spec}: no such directory, and not a model id of the form owner/name`);

  const cached = join(options.cacheDir, spec.replace('/', '--'));
  if (await isDirectory(cached)) {
    options.logger.info({ model: spec, dir: cached }, 'loading the embedding model from the cache');
    return OnnxEmbedder.open(cached, spec);
  }
  await removeAbandoned(cached);
  const scratch = `${cached}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  options.logger.info({ model: spec, hub: options.hubUrl, dir: cached }, 'fetching the embedding model (once; it is kept in the cache)');
  try {
    await download(options.hubUrl, spec, scratch);
    const embedder = await OnnxEmbedder.open(scratch, spec, cached).catch((error: unknown) => {
      throw new Error(`the model fetched for ${spec} does not load: ${(error as Error).message}`);
    });
    try {
      await rename(scratch, cached);
    } catch (error) {
      // Another process fetched it first: theirs is as good, and this copy goes.
      if (!(await isDirectory(cached))) {
        await embedder.close();
        throw error;
      }
    }
    return embedder;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
};
