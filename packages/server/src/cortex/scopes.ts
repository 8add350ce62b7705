/**
 * Scope ids. Entity paths may be any text (even `external/github`), so every scope id says
 * what kind of scope it is; ids sort path digests together and in path order, which makes
 * "every digest under a prefix" one range of a record listing.
 */
export const pathScope = (entityPath: string): string => `path:${entityPath}`;
export const sourceScope = (agentId: string): string => `source:${agentId}`;
export const namespaceScope = (namespace: string): string => `namespace:${namespace}`;

export const isSourceWriter = (agentId: string): boolean => agentId.startsWith('external/');

/**
 * The name under which a repository and a PagerDuty service are taken to be the same system:
 * lower-case letters and digits only, without a trailing "service" or "svc". So the repo
 * `acme/checkout-service` and the service "Checkout Service" (or "checkout") match.
 */
export const serviceKey = (name: string): string => {
  const compact = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  const stripped = compact.replace(/(service|svc)$/, '');
  return stripped === '' ? compact : stripped;
};

/** The repository a `repos/<owner>/<repo>` path names (its last segment). */
export const repoNameOf = (entityPath: string): string => entityPath.split('/').at(-1) ?? entityPath;
