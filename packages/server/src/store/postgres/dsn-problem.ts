/** A DSN as it may be shown: its password (up to the last "@", which it may hold) masked. */
const maskedDsn = (dsn: string): string => {
  const at = dsn.lastIndexOf('@');
  const scheme = dsn.indexOf('://');
  if (at < 0 || scheme < 0 || at < scheme) return `${dsn.slice(0, Math.max(scheme, 0))}://…`;
  const userinfo = dsn.slice(scheme + 3, at);
  const colon = userinfo.indexOf(':');
  const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
  // Up to the query, whose parameters may hold secrets of their own.
  return `${dsn.slice(0, scheme + 3)}${user}${colon < 0 ? '' : ':***'}@${dsn.slice(at + 1).split('?')[0] ?? ''}`;
};

const ENCODE_HINT = 'percent-encode the user name and password (e.g. encodeURIComponent: / as %2F, @ as %40, # as %23, ? as %3F, : as %3A, space as %20)';

/**
 * What is wrong with a PostgreSQL connection string, in words that never repeat its password;
 * undefined when it is one the client reads as written. A password with an unescaped "/", "?",
 * "#" or "@" is not always a parse error: the URL may then name another host (`p@ss#word` reads
 * as host `ss`), so an "@" or "#" past the host is refused too. Several hosts (`h1:5432,h2`)
 * are checked as the client reads them, by their first.
 */
export const dsnProblem = (dsn: string): string | undefined => {
  if (!/^postgres(ql)?:\/\//i.test(dsn)) return undefined; // the backend's own check says so
  const authority = dsn.slice(dsn.indexOf('://') + 3).split(/[/?#]/)[0] ?? '';
  const hosts = authority.slice(authority.lastIndexOf('@') + 1);
  const single = hosts.includes(',') ? dsn.replace(hosts, hosts.split(',')[0] ?? '') : dsn;
  const shown = `(${maskedDsn(dsn)})`;
  if (!URL.canParse(single)) return `not a valid connection URL ${shown}: ${ENCODE_HINT}`;
  const url = new URL(single);
  if (url.hash !== '' || `${url.pathname}${url.search}`.includes('@')) return `the host or database cannot be read ${shown}: ${ENCODE_HINT}`;
  if (url.hostname === '') return `expected a host: postgres://user:password@host:5432/database ${shown}`;
  return undefined;
};
