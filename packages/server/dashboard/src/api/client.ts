/** An error answer of the API (SPEC §4), or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly details: Array<{ field: string; message: string }>;

  constructor(status: number, code: string, message: string, requestId: string | null = null, details: ApiError['details'] = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.details = details;
  }
}

export type Query = Record<string, string | number | undefined | null>;

export interface Api {
  get<T>(path: string, query?: Query): Promise<T>;
  send<T>(method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** Headers for calls made outside this client (the event streams). */
  headers(): Record<string, string>;
}

export const withQuery = (path: string, query: Query = {}): string => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
};

/** `/api/v1/<kind>/<entity_path>/<key>`: path segments and key each percent-encoded. */
export const entryUrl = (kind: 'entries' | 'history', path: string, key: string): string =>
  `/api/v1/${kind}/${path.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(key)}`;

const failure = async (res: Response): Promise<ApiError> => {
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string; request_id?: string; details?: ApiError['details'] } };
    const e = body.error ?? {};
    return new ApiError(res.status, e.code ?? 'ERROR', e.message ?? res.statusText, e.request_id ?? null, e.details ?? []);
  } catch {
    return new ApiError(res.status, 'ERROR', `the server answered ${res.status} ${res.statusText}`);
  }
};

/**
 * The API with this session's key in the X-Cairn-API-Key header on every call (never in a
 * URL). A 401 means the key stopped working (revoked, server restarted with other keys):
 * `onUnauthenticated` sends the user back to the key form.
 */
export const createApi = (key: string | null, onUnauthenticated: () => void): Api => {
  const headers = (): Record<string, string> => (key ? { 'x-cairn-api-key': key } : {});
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(path, {
        method,
        headers: { ...headers(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new ApiError(0, 'NETWORK', 'the server cannot be reached; is it running?');
    }
    if (res.status === 401) onUnauthenticated();
    if (!res.ok) throw await failure(res);
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  };
  return {
    get: (path, query) => call('GET', withQuery(path, query)),
    send: (method, path, body) => call(method, path, body),
    headers,
  };
};
