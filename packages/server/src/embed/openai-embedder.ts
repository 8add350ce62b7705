import type { Embedder } from '../ports/embedder.ts';

export interface OpenAiEmbedderOptions {
  /** Base URL of the API (`…/v1`), or the full `…/embeddings` URL. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
  /** Texts per request; servers such as TEI refuse large batches. */
  batch?: number;
}

interface EmbeddingsAnswer {
  data?: { embedding?: unknown; index?: number }[];
}

/** Many models take about 8k tokens; cut long texts rather than have the request refused. */
const MAX_CHARS = 8_000;

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
      const detail = (await response.text().catch(() => '')).slice(0, 300);
      throw new Error(`embeddings endpoint answered ${response.status}: ${detail}`);
    }
    const answer = (await response.json()) as EmbeddingsAnswer;
    const data = answer.data;
    if (!Array.isArray(data) || data.length !== texts.length) throw new Error(`embeddings endpoint answered ${data?.length ?? 'no'} vectors for ${texts.length} texts`);
    const vectors: Float32Array[] = new Array(texts.length);
    data.forEach((item, position) => {
      const embedding = item.embedding;
      if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number')) {
        throw new Error('embeddings endpoint answered something other than arrays of numbers (base64 encoding is not supported)');
      }
      vectors[typeof item.index === 'number' ? item.index : position] = Float32Array.from(embedding as number[]);
    });
    const dimension = (vectors[0] as Float32Array).length;
    if (vectors.some((v) => !v || v.length !== dimension)) throw new Error('embeddings endpoint answered vectors of different sizes');
    if (this.learned !== undefined && this.learned !== dimension) {
      throw new Error(`the model now answers ${dimension} dimensions, not ${this.learned}; restart to re-embed`);
    }
    this.learned = dimension;
    return vectors;
  }
}
