export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * One JSON request to a server in another process, with a deadline: an answer that takes
 * longer than `timeoutMs` rejects (a TimeoutError), so a hanging server fails the test
 * instead of stalling it.
 */
export const httpCall = async (url: string, method: string, path: string, body?: unknown, timeoutMs = 5000): Promise<HttpAnswer> => {
  const init: RequestInit = { method, signal: AbortSignal.timeout(timeoutMs) };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const res = await fetch(url + path, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: keep the text, so a failing assertion shows what came back.
  }
  return { status: res.status, headers: res.headers, body: parsed };
};

/** The URL path of an entry (keys may hold "/", so they are percent-encoded). */
export const entryPath = (entityPath: string, key: string, version?: number): string =>
  `/api/v1/entries/${entityPath}/${encodeURIComponent(key)}${version === undefined ? '' : `?version=${version}`}`;

/** Every version of an entry, newest first, following `next_before` pages. */
export const fullHistory = async (url: string, entityPath: string, key: string): Promise<any[]> => {
  const versions: any[] = [];
  let before: number | null = null;
  do {
    const query: string = `?limit=1000${before ? `&before=${before}` : ''}`;
    const res: HttpAnswer = await httpCall(url, 'GET', `/api/v1/history/${entityPath}/${encodeURIComponent(key)}${query}`);
    if (res.status !== 200) throw new Error(`history answered ${res.status}: ${JSON.stringify(res.body)}`);
    versions.push(...res.body.versions);
    before = res.body.next_before ?? null;
  } while (before);
  return versions;
};
