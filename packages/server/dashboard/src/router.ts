import { useEffect, useState } from 'preact/hooks';

export type Page = 'connectors' | 'memory' | 'search' | 'cortex' | 'keys' | 'audit';
export const PAGES: readonly Page[] = ['connectors', 'memory', 'search', 'cortex', 'keys', 'audit'];

export interface Route {
  page: Page | null;
  params: URLSearchParams;
}

// Hash routes (#/memory?path=…) keep every dashboard URL a request for the same static
// index.html, so the server needs no per-page fallback route.
export const currentRoute = (): Route => {
  const hash = location.hash.replace(/^#\/?/, '');
  const [name = '', query = ''] = hash.split('?');
  return { page: (PAGES as readonly string[]).includes(name) ? (name as Page) : null, params: new URLSearchParams(query) };
};

export const hrefFor = (page: Page, params: Record<string, string | number | undefined | null> = {}): string => {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') query.set(k, String(v));
  const text = query.toString();
  return `#/${page}${text ? `?${text}` : ''}`;
};

export const navigate = (page: Page, params: Record<string, string | number | undefined | null> = {}): void => {
  location.hash = hrefFor(page, params);
};

/** Corrects the address in place (a page the key may not see, or none named): Back should not return to it. */
export const redirect = (page: Page, params: Record<string, string | number | undefined | null> = {}): void => {
  location.replace(hrefFor(page, params));
};

export const useRoute = (): Route => {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
};
