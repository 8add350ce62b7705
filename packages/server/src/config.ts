import { z } from 'zod';
import type { BackendName } from './ports/store.ts';

/**
 * Every setting Cairn reads, parsed once at start from the environment (SPEC §2) and the
 * command line. The result is frozen and passed down; nothing else reads `process.env`.
 */
export interface Config {
  port: number;
  host: string;
  backend: BackendName;
  dataDir: string;
  dbDsn: string | undefined;
  objectBucket: string | undefined;
  objectEndpoint: string | undefined;
  objectPrefix: string;
  /** AWS region for S3 (the standard AWS_REGION variable). */
  objectRegion: string;
  apiKeys: readonly string[];
  agentId: string;
  httpUrl: string | undefined;
  namespace: string;
  cortexDebounceMs: number;
  rateLimitRpm: number;
  /** Requests in flight beyond which the server answers 503 (CAIRN_MAX_CONCURRENT). */
  maxConcurrent: number;
  connectorSecrets: Readonly<Record<string, string>>;
  slackChannels: readonly string[];
  logLevel: string;
  sseKeepAliveMs: number;
  /** OpenAI-compatible embeddings endpoint; unset = the built-in offline embedder. */
  embeddingsUrl: string | undefined;
  embeddingsModel: string | undefined;
  embeddingsApiKey: string | undefined;
}

/** Values given on the command line; they win over the environment. */
export interface ConfigFlags {
  port?: string | number;
  host?: string;
  dataDir?: string;
}

const optionalText = z
  .string()
  .transform((s) => s.trim())
  .pipe(z.string())
  .optional()
  .transform((s) => (s ? s : undefined));

const integer = (min: number, max: number, fallback: number) =>
  z.coerce
    .number({ error: 'expected a whole number' })
    .int({ error: 'expected a whole number' })
    .min(min, { error: `expected at least ${min}` })
    .max(max, { error: `expected at most ${max}` })
    .default(fallback);

const list = z
  .string()
  .optional()
  .transform((s) => (s ?? '').split(',').map((x) => x.trim()).filter((x) => x.length > 0));

const EnvSchema = z.object({
  CAIRN_PORT: integer(0, 65535, 8080),
  CAIRN_HOST: z.string().min(1).default('127.0.0.1'),
  CAIRN_DATA_DIR: z.string().min(1).default('/data/.cairn'),
  CAIRN_DB_DSN: optionalText.pipe(
    z.string().regex(/^postgres(ql)?:\/\//, { error: 'expected a postgres:// connection string' }).optional(),
  ),
  CAIRN_OBJECT_BUCKET: optionalText.pipe(
    z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { error: 'expected an S3 bucket name' }).optional(),
  ),
  CAIRN_OBJECT_ENDPOINT: optionalText.pipe(z.url({ error: 'expected an http(s) URL' }).optional()),
  CAIRN_OBJECT_PREFIX: z.string().default('cairn/'),
  AWS_REGION: z.string().regex(/^[a-z0-9-]{2,32}$/, { error: 'expected an AWS region such as us-east-1' }).default('us-east-1'),
  CAIRN_API_KEYS: list.pipe(z.array(z.string().min(8, { error: 'each key must be at least 8 characters' }))),
  CAIRN_AGENT_ID: z.string().min(1).max(256).default('cairn-server'),
  CAIRN_HTTP_URL: optionalText.pipe(z.url({ error: 'expected an http(s) URL' }).optional()),
  CAIRN_NAMESPACE: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, { error: 'expected letters, digits, ".", "_" or "-"' }).default('default'),
  CAIRN_CORTEX_DEBOUNCE_MS: integer(0, 3_600_000, 3000),
  CAIRN_RATE_LIMIT_RPM: integer(0, 100_000_000, 6000),
  CAIRN_MAX_CONCURRENT: integer(1, 1_000_000, 1024),
  CAIRN_CONNECTOR_SLACK_CHANNELS: list,
  CAIRN_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CAIRN_SSE_KEEPALIVE_MS: integer(100, 600_000, 15_000),
  CAIRN_EMBEDDINGS_URL: optionalText.pipe(z.url({ error: 'expected an http(s) URL such as http://localhost:11434/v1' }).optional()),
  CAIRN_EMBEDDINGS_MODEL: optionalText.pipe(z.string().max(256).optional()),
  CAIRN_EMBEDDINGS_API_KEY: optionalText,
});

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const CONNECTOR_SECRET = /^CAIRN_CONNECTOR_([A-Z0-9_]+)_SECRET$/;

const connectorSecrets = (env: Record<string, string | undefined>): Record<string, string> => {
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const match = CONNECTOR_SECRET.exec(name);
    if (match?.[1] && value) secrets[match[1].toLowerCase()] = value;
  }
  return secrets;
};

/** Parse env + flags, or throw a ConfigError naming every bad variable and what it expects. */
export const parseConfig = (env: Record<string, string | undefined>, flags: ConfigFlags = {}): Readonly<Config> => {
  const merged: Record<string, string | undefined> = { ...env };
  if (flags.port !== undefined) merged.CAIRN_PORT = String(flags.port);
  if (flags.host !== undefined) merged.CAIRN_HOST = flags.host;
  if (flags.dataDir !== undefined) merged.CAIRN_DATA_DIR = flags.dataDir;
  // Empty variables count as unset, as a shell user expects from `CAIRN_X= cairn serve`.
  for (const [k, v] of Object.entries(merged)) if (v === '') delete merged[k];

  const parsed = EnvSchema.safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${String(issue.path[0] ?? '?')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  if (e.CAIRN_DB_DSN && e.CAIRN_OBJECT_BUCKET) {
    throw new ConfigError('invalid configuration: CAIRN_DB_DSN and CAIRN_OBJECT_BUCKET are both set; choose one backend');
  }
  if (e.CAIRN_EMBEDDINGS_URL && !e.CAIRN_EMBEDDINGS_MODEL) {
    throw new ConfigError('invalid configuration:\n  CAIRN_EMBEDDINGS_MODEL: required with CAIRN_EMBEDDINGS_URL (the model name, e.g. nomic-embed-text)');
  }
  const backend: BackendName = e.CAIRN_DB_DSN ? 'postgres' : e.CAIRN_OBJECT_BUCKET ? 's3' : 'filesystem';
  return Object.freeze({
    port: e.CAIRN_PORT,
    host: e.CAIRN_HOST,
    backend,
    dataDir: e.CAIRN_DATA_DIR,
    dbDsn: e.CAIRN_DB_DSN,
    objectBucket: e.CAIRN_OBJECT_BUCKET,
    objectEndpoint: e.CAIRN_OBJECT_ENDPOINT,
    objectPrefix: e.CAIRN_OBJECT_PREFIX,
    objectRegion: e.AWS_REGION,
    apiKeys: Object.freeze(e.CAIRN_API_KEYS),
    agentId: e.CAIRN_AGENT_ID,
    httpUrl: e.CAIRN_HTTP_URL,
    namespace: e.CAIRN_NAMESPACE,
    cortexDebounceMs: e.CAIRN_CORTEX_DEBOUNCE_MS,
    rateLimitRpm: e.CAIRN_RATE_LIMIT_RPM,
    maxConcurrent: e.CAIRN_MAX_CONCURRENT,
    connectorSecrets: Object.freeze(connectorSecrets(env)),
    slackChannels: Object.freeze(e.CAIRN_CONNECTOR_SLACK_CHANNELS),
    logLevel: e.CAIRN_LOG_LEVEL,
    sseKeepAliveMs: e.CAIRN_SSE_KEEPALIVE_MS,
    embeddingsUrl: e.CAIRN_EMBEDDINGS_URL,
    embeddingsModel: e.CAIRN_EMBEDDINGS_MODEL,
    embeddingsApiKey: e.CAIRN_EMBEDDINGS_API_KEY,
  });
};
