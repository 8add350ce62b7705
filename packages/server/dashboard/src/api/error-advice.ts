import type { ApiError } from './client.ts';

const marked = (error: ApiError, field: string, message: string): boolean => error.details.some((d) => d.field === field && d.message === message);

/**
 * What a person can do about an error, under its message. A 503 is most often an outage that
 * passes, but two are marked as not: stored data the request needs is damaged (asking again
 * meets the same damage), and a write whose outcome the server does not know (resending it
 * could store it twice).
 */
export const errorAdvice = (error: ApiError): string => {
  const logged = error.requestId ? ` Request id ${error.requestId} identifies it in the server log.` : '';
  if (error.status === 0) return 'Check that the server is running and reachable, then retry.';
  if (error.status === 403) return 'This key does not allow it; an admin can issue one with the right scope or prefixes.';
  if (error.status === 503 && marked(error, 'stored_data', 'damaged')) return `Retrying will not help: an operator must restore the damaged data from a backup.${logged}`;
  if (error.status === 503 && marked(error, 'outcome', 'unknown')) return 'The change may or may not have been stored: reload to see before making it again.';
  if (error.status === 429 || error.status === 503) return 'The server is busy or its storage is down; retry in a few seconds.';
  return logged.trim();
};
