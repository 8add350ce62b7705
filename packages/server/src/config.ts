import { z } from 'zod';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { integer, list, optionalText } from './domain/env-values.ts';
import { SettingError } from './domain/setting-error.ts';
import { type StorageConfig, backendEnv, selectStorage } from './store/backends.ts';

/** Values given on the command line; they win over the environment. */
export interface ConfigFlags {
  port?: string | number;
  host?: string;
  dataDir?: string;
  /** `cairn cortex --metrics-port`. */
  cortexMetricsPort?: string | number;
}

/** An address webhook paths can follow: no query, fragment or credentials of its own. */
const bareAddress = (url: URL): boolean => url.search === '' && url.hash === '' && url.username === '' && url.password === '';

/**
 * Every setting Cairn reads (SPEC §2) but the backends' own, which each backend declares in
 * its folder (store/<name>/backend.ts). Parsed once at start from the environment and the
 * command line; the result is frozen and passed down; nothing else reads `process.env`.
 */
const BaseEnv = z.object({
  CAIRN_PORT: integer(0, 65535, 8080),
  CAIRN_HOST: z.string().min(1).default('127.0.0.1'),
  CAIRN_API_KEYS: list.pipe(z.array(z.string().min(8, { error: 'each key must be at least 8 characters' }))),
  CAIRN_AGENT_ID: z.string().min(1).max(256).default('cairn-server'),
  CAIRN_HTTP_URL: optionalText.pipe(z.url({ error: 'expected an http(s) URL' }).optional()),
  CAIRN_PUBLIC_URL: optionalText.pipe(
    z
      .url({ protocol: /^https?$/, error: 'expected the http(s) address clients reach this server at, such as https://cairn.example.com' })
      .refine((u) => !URL.canParse(u) || bareAddress(new URL(u)), { error: 'expected an address without query, fragment or credentials' })
      // A wildcard certificate's name (https://*.example.com) is not an address anyone can reach.
      .refine((u) => !URL.canParse(u) || !new URL(u).hostname.includes('*'), { error: 'expected one host, not a wildcard (*): the address clients reach this server at, such as https://cairn.example.com' })
      .optional(),
  ),
  CAIRN_NAMESPACE: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, { error: 'expected letters, digits, ".", "_" or "-"' }).default('default'),
  CAIRN_CORTEX_DEBOUNCE_MS: integer(0, 3_600_000, 3000),
  // Unset (the default): `cairn cortex` opens no port.
  CAIRN_CORTEX_METRICS_PORT: optionalText.pipe(
    z.coerce
      .number<string>({ error: 'expected a port number 1–65535' })
      .int({ error: 'expected a port number 1–65535' })
      .min(1, { error: 'expected a port number 1–65535' })
      .max(65535, { error: 'expected a port number 1–65535' })
      .optional(),
  ),
  CAIRN_RATE_LIMIT_RPM: integer(0, 100_000_000, 6000),
  CAIRN_MAX_CONCURRENT: integer(1, 1_000_000, 1024),
  // At least a second: Node looks for late requests once a second (http/request-timeout.ts).
  CAIRN_REQUEST_TIMEOUT_MS: integer(1000, 3_600_000, 30_000),
  CAIRN_CONNECTOR_SLACK_CHANNELS: list,
  CAIRN_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CAIRN_SSE_KEEPALIVE_MS: integer(100, 600_000, 15_000),
  CAIRN_MAX_STREAMS: integer(1, 1_000_000, 1000),
  CAIRN_MAX_STREAMS_PER_KEY: integer(1, 1_000_000, 32),
  CAIRN_EMBEDDINGS_URL: optionalText.pipe(z.url({ error: 'expected an http(s) URL such as http://localhost:11434/v1' }).optional()),
  CAIRN_EMBEDDINGS_MODEL: optionalText.pipe(z.string().max(256).optional()),
  CAIRN_EMBEDDINGS_API_KEY: optionalText,
  CAIRN_MODEL_CACHE: optionalText,
  CAIRN_MODEL_HUB_URL: optionalText.pipe(z.url({ error: 'expected an http(s) URL such as https://huggingface.co' }).optional()),
  CAIRN_RETENTION_INTERVAL_MS: integer(0, 7 * 86_400_000, 3_600_000),
  CAIRN_DEDUP_WINDOW_DAYS: integer(8, 3650, 14),
  CAIRN_AUDIT_RETENTION_DAYS: integer(0, 36_500, 0),
  CAIRN_SECRET_KEY: optionalText.pipe(z.string().min(16, { error: 'at least 16 characters (e.g. openssl rand -base64 32)' }).optional()),
  CAIRN_SECRET_KEY_PREVIOUS: optionalText,
  CAIRN_SEARCH_PROFILE: z.enum(['v2', 'v1'], { error: 'expected v2 (the default) or v1' }).default('v2'),
  CAIRN_SEARCH_LEXICON: z.enum(['on', 'off'], { error: 'expected on (the default) or off' }).default('on'),
});

/** The settings in the names the code uses: each written once, its type inferred. */
const settingsOf = (e: z.output<typeof BaseEnv>, env: Record<string, string | undefined>) => ({
  port: e.CAIRN_PORT,
  host: e.CAIRN_HOST,
  apiKeys: Object.freeze(e.CAIRN_API_KEYS) as readonly string[],
  agentId: e.CAIRN_AGENT_ID,
  /** The server `cairn mcp`, the client commands and `cairn cortex --health` talk to. */
  httpUrl: e.CAIRN_HTTP_URL,
  /**
   * The address providers and browsers reach this server at (behind a TLS proxy or an
   * ingress: https and the public host), which webhook URLs start with; unset, the address
   * the request came to.
   */
  publicUrl: e.CAIRN_PUBLIC_URL?.replace(/\/+$/, ''),
  namespace: e.CAIRN_NAMESPACE,
  cortexDebounceMs: e.CAIRN_CORTEX_DEBOUNCE_MS,
  /** Where `cairn cortex` serves /metrics and /health (on CAIRN_HOST); unset, it opens no port. */
  cortexMetricsPort: e.CAIRN_CORTEX_METRICS_PORT,
  rateLimitRpm: e.CAIRN_RATE_LIMIT_RPM,
  /** Requests in flight beyond which the server answers 503. */
  maxConcurrent: e.CAIRN_MAX_CONCURRENT,
  /** How long a client has to send a whole request, headers and body, before it is answered 408. */
  requestTimeoutMs: e.CAIRN_REQUEST_TIMEOUT_MS,
  slackChannels: Object.freeze(e.CAIRN_CONNECTOR_SLACK_CHANNELS) as readonly string[],
  logLevel: e.CAIRN_LOG_LEVEL,
  sseKeepAliveMs: e.CAIRN_SSE_KEEPALIVE_MS,
  /** Event streams (entry and Cortex streams together) open at once beyond which a new one is answered 503. */
  maxStreams: e.CAIRN_MAX_STREAMS,
  /** Event streams one key may hold open at once beyond which a new one is answered 429. */
  maxStreamsPerKey: e.CAIRN_MAX_STREAMS_PER_KEY,
  /** OpenAI-compatible embeddings endpoint; unset = a local model (embeddingsModel), else the built-in offline embedder. */
  embeddingsUrl: e.CAIRN_EMBEDDINGS_URL,
  /** The endpoint's model name; without an endpoint, a local model directory or a model id to fetch. */
  embeddingsModel: e.CAIRN_EMBEDDINGS_MODEL,
  embeddingsApiKey: e.CAIRN_EMBEDDINGS_API_KEY,
  /** Where models fetched by id are kept: the user's cache directory unless set. */
  modelCache: e.CAIRN_MODEL_CACHE ?? join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'cairn', 'models'),
  /** The hub models are fetched from, in Hugging Face's layout. */
  modelHubUrl: e.CAIRN_MODEL_HUB_URL ?? 'https://huggingface.co',
  /** How often retention policies, dedup and audit expiry run (one replica per period); 0 = never. */
  retentionIntervalMs: e.CAIRN_RETENTION_INTERVAL_MS,
  /** Delivery dedup records older than this expire; longer than any provider redelivers (README, Retention). */
  dedupWindowMs: e.CAIRN_DEDUP_WINDOW_DAYS * 86_400_000,
  /** Audit batches stored longer ago than this are deleted by the retention pass; 0 = kept forever. */
  auditRetentionMs: e.CAIRN_AUDIT_RETENTION_DAYS * 86_400_000,
  /** Key that encrypts connector signing secrets at rest (services/secrets/). */
  secretKey: e.CAIRN_SECRET_KEY,
  /** The key being rotated away from: still opens what it sealed. */
  secretKeyPrevious: e.CAIRN_SECRET_KEY_PREVIOUS,
  /**
   * How search ranks: v2 (default) with the built-in embedder's lexical resource, v1 the
   * ranking before it (GloVe vectors alone), kept so the two can be compared.
   */
  searchProfile: e.CAIRN_SEARCH_PROFILE,
  /**
   * Whether a sentence model (CAIRN_EMBEDDINGS_MODEL) keeps the built-in lexicon beside it for
   * query expansion and the word-by-word ranking; the built-in embedder always has its own.
   */
  searchLexicon: e.CAIRN_SEARCH_LEXICON === 'on',
});

export type Config = ReturnType<typeof settingsOf> & {
  /** The backend and its own settings (store/backends.ts). */
  storage: StorageConfig;
  /** Signing secrets by connector name, from CAIRN_CONNECTOR_<NAME>_SECRET. */
  connectorSecrets: Readonly<Record<string, string>>;
};

/** Every backend's own variables, checked at start with the rest whichever is selected. */
const BackendsEnv = z.object(backendEnv());

/** A setting no run can use as it is (exit 2): a bad value, an address that cannot be had. */
export class ConfigError extends SettingError {
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
  if (flags.cortexMetricsPort !== undefined) merged.CAIRN_CORTEX_METRICS_PORT = String(flags.cortexMetricsPort);
  // Empty variables count as unset, as a shell user expects from `CAIRN_X= cairn serve`.
  for (const [k, v] of Object.entries(merged)) if (v === '') delete merged[k];

  const parsed = BaseEnv.safeParse(merged);
  const backends = BackendsEnv.safeParse(merged);
  if (!parsed.success || !backends.success) {
    const issues = [...(parsed.error?.issues ?? []), ...(backends.error?.issues ?? [])];
    const lines = issues.map((issue) => `${String(issue.path[0] ?? '?')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const storage = selectStorage(backends.data, (message) => {
    throw new ConfigError(`invalid configuration: ${message}`);
  });
  if (e.CAIRN_EMBEDDINGS_URL && !e.CAIRN_EMBEDDINGS_MODEL) {
    throw new ConfigError('invalid configuration:\n  CAIRN_EMBEDDINGS_MODEL: required with CAIRN_EMBEDDINGS_URL (the model name, e.g. nomic-embed-text)');
  }
  return Object.freeze({ ...settingsOf(e, merged), storage, connectorSecrets: Object.freeze(connectorSecrets(env)) });
};
