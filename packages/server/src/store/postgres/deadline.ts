import { unavailable } from '../../domain/errors.ts';

/**
 * Rejects with UNAVAILABLE if `work` has not settled within `ms`. A refused connection fails
 * at once, but a database that vanished without closing its sockets (a network partition, a
 * frozen host) leaves a query waiting on TCP for minutes; the caller gets a 503 instead. The
 * query itself is left to the server's statement_timeout and the socket's keepalive.
 */
export const withDeadline = <T>(work: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailable(`the database did not answer within ${ms} ms (${what})`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
};
