import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

// Request ids: a random per-process prefix and a counter — unique across replicas and
// restarts, and far cheaper than a UUID per request.
const BOOT = randomUUID().slice(0, 8);
let requestCounter = 0;

/** A fresh request id, for a request that brought none (or one the parser never read). */
export const nextRequestId = (): string => `${BOOT}-${(++requestCounter).toString(36)}`;

/** Keep a caller's id when it is sane, so logs join up across services; else make one. */
export const requestIdOf = (req: IncomingMessage): string => {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId();
};
