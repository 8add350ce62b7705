import type { RouteInfo } from './route-table.ts';

/** A route's URL pattern (`/api/v1/entries/*`, `/api/v1/admin/keys/:id`) as a test of a path. */
const patternOf = (url: string): RegExp =>
  new RegExp(`^${url.split(/(\*|:[A-Za-z_]\w*)/).map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`);

/**
 * The methods the app serves at a path, for the answer to a method it does not: 405 with
 * `Allow` (RFC 9110), where "no route" (404) would say the path itself is wrong. Patterns are
 * compiled once, on the first request that needs them (only such requests do).
 */
export const allowedMethods = (routes: readonly RouteInfo[]): ((path: string) => string[]) => {
  let compiled: { method: string; test: RegExp }[] | null = null;
  return (path) => {
    compiled ??= routes.map(({ method, url }) => ({ method, test: patternOf(url) }));
    return [...new Set(compiled.filter(({ test }) => test.test(path)).map(({ method }) => method))].sort();
  };
};
