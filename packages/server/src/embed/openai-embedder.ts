import type { Embedder } from '../ports/embedder.ts';

export interface OpenAiEmbedderOptions {
  /** Base URL of the API (`…/v1`), or the full `…/embeddings` URL. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
  /** Texts per request; servers such as TEI refuse large batches. */
  batch?: number;
  /** The largest answer read, in bytes (tests lower it); past it the request is aborted. */
  maxAnswerBytes?: number;
}

interface EmbeddingsAnswer {
  data?: { embedding?: unknown; index?: unknown }[];
}

/** Many models take about 8k tokens; cut long texts rather than have the request refused. */
const MAX_CHARS = 8_000;
/**
 * An answer of 32 texts of 3,072 dimensions written as JSON is about 2 MB: 64 MiB is room for
 * any model, and keeps an endpoint gone wrong (an endless or enormous body) from filling memory.
 */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** Of an error answer, only the start is quoted in the log. */
const MAX_ERROR_BYTES = 4_096;
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * An error the same texts will meet again, however often they are sent: the endpoint refused
 * them (400, 413 or 422, such as TEI's 413 for too many tokens) or answered
 * numbers that are not finite. `refused` tells the callers (the search index's queues) to
 * send the texts one by one and set aside the one refused alone, rather than retry for ever.
 */
export class EmbeddingRefusedError extends Error {
  readonly refused = true;
}

/** Statuses that refuse the texts themselves: 400 (e.g. too many tokens), 413, 422. */
const TEXT_REFUSALS = new Set([400, 413, 422]);

/** A transient failure; `retryAfterMs` when the endpoint said how long to wait (Retry-After on 429 or 503). */
export class EmbeddingUnavailableError extends Error {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryAfterMs?: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now; undefined when absent or unreadable. */
export const retryAfterMs = (header: string | null, now = Date.now()): number | undefined => {
  if (!header) return undefined;
  const text = header.trim();
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  return Number.isFinite(ms) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) : undefined;
};

/**
 * Reads a body up to `cap` bytes; past it the rest is cancelled, never read: `throw` rejects
 * (an answer), `truncate` keeps the start (an error answer, quoted in the log).
 */
const readCapped = async (response: Response, cap: number, over: 'throw' | 'truncate'): Promise<string> => {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > cap) {
        if (over === 'throw') throw new Error(`embeddings endpoint answered more than ${cap} bytes; answer abandoned`);
        chunks.push(value.subarray(0, value.byteLength - (size - cap)));
        break;
      }
      chunks.push(value);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).toString('utf8');
};

/**
 * Any server speaking OpenAI's `POST /embeddings` (OpenAI, Ollama, vLLM, Hugging Face TEI,
 * LiteLLM …). The dimension is learned from the first answer. Failures reject; the search
 * index retries in the background, so an unreachable endpoint never fails a write.
 */
export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  readonly local = false;
  private learned: number | undefined;
  private readonly endpoint: string;
  private readonly options: OpenAiEmbedderOptions;

  constructor(options: OpenAiEmbedderOptions) {
    this.options = options;
    const base = options.url.replace(/\/+$/, '');
    this.endpoint = base.endsWith('/embeddings') ? base : `${base}/embeddings`;
    this.id = `openai:${options.model}`;
  }

  get dimension(): number | undefined {
    return this.learned;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const size = this.options.batch ?? 32;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.request(texts.slice(i, i + size))));
    return out;
  }

  /** The endpoint's words without the key: some quote the Authorization header they refused. */
  private redacted(detail: string): string {
    let out = detail.replace(/Bearer\s+[^\s"'\\,}]+/gi, 'Bearer [redacted]');
    const key = this.options.apiKey;
    if (key) out = out.split(key).join('[redacted]');
    return out;
  }

  private async request(texts: readonly string[]): Promise<Float32Array[]> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: this.options.model, input: texts.map((t) => (t.length > MAX_CHARS ? t.slice(0, MAX_CHARS) : t || ' ')) }),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
    });
    if (!response.ok) {
      const detail = this.redacted((await readCapped(response, MAX_ERROR_BYTES, 'truncate').catch(() => '')).slice(0, 300));
      const message = `embeddings endpoint answered ${response.status}: ${detail}`;
      const status = response.status;
      // What these texts are refused for (malformed, too large, unprocessable): they would be
      // refused again whenever sent. Any other 4xx (401/403 a bad key, 404 a wrong model or URL,
      // 408, 429) says nothing of the texts: setting them aside would lose every text sent
      // while the key was wrong, for good on PostgreSQL, which marks them.
      if (TEXT_REFUSALS.has(status)) throw new EmbeddingRefusedError(message);
      throw new EmbeddingUnavailableError(message, status === 429 || status === 503 ? retryAfterMs(response.headers.get('retry-after')) : undefined);
    }
    const body = await readCapped(response, this.options.maxAnswerBytes ?? MAX_ANSWER_BYTES, 'throw');
    const answer = JSON.parse(body) as EmbeddingsAnswer;
    const vectors = this.vectorsOf(answer, texts.length);
    const dimension = (vectors[0] as Float32Array).length;
    if (this.learned !== undefined && this.learned !== dimension) {
      throw new Error(`the model now answers ${dimension} dimensions, not ${this.learned}; restart to re-embed`);
    }
    this.learned = dimension;
    return vectors;
  }

  /**
   * The answer's vectors in the order of the texts: each position 0…n-1 holds exactly one
   * vector (by its `index`, or its place when there is none), all of one length, of finite
   * numbers. Anything else is refused whole: a hole or a repeated index once let an array with
   * holes through, which crashed the server as it applied them.
   */
  private vectorsOf(answer: EmbeddingsAnswer, n: number): Float32Array[] {
    const data = answer?.data;
    if (!Array.isArray(data) || data.length !== n) throw new Error(`embeddings endpoint answered ${Array.isArray(data) ? data.length : 'no'} vectors for ${n} texts`);
    const vectors: (Float32Array | undefined)[] = new Array(n).fill(undefined);
    let dimension = -1;
    let infinite = false;
    data.forEach((item, position) => {
      const embedding = item?.embedding;
      if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number')) {
        throw new Error('embeddings endpoint answered something other than arrays of numbers (base64 encoding is not supported)');
      }
      const at = item.index === undefined || item.index === null ? position : item.index;
      if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at >= n) throw new Error(`embeddings endpoint answered a vector for index ${String(at)} of ${n} texts`);
      if (vectors[at]) throw new Error(`embeddings endpoint answered two vectors for index ${at}`);
      if (dimension === -1) dimension = embedding.length;
      else if (embedding.length !== dimension) throw new Error('embeddings endpoint answered vectors of different sizes');
      if (!embedding.every((x) => Number.isFinite(x))) infinite = true;
      vectors[at] = Float32Array.from(embedding as number[]);
    });
    // Numbers past float range (1e999) or NaN would give every search NaN scores, and
    // PostgreSQL refuses them: the texts are refused, as a 4xx would refuse them.
    if (infinite || vectors.some((v) => v!.some((x) => !Number.isFinite(x)))) throw new EmbeddingRefusedError('embeddings endpoint answered numbers that are not finite');
    return vectors as Float32Array[];
  }
}
