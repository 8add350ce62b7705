import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api/client.ts';

export const Loading = ({ label = 'Loading…' }: { label?: string }) => (
  <div class="state loading" role="status" aria-live="polite">
    <span class="spinner" aria-hidden="true" />
    {label}
  </div>
);

const advice = (error: ApiError): string => {
  if (error.status === 0) return 'Check that the server is running and reachable, then retry.';
  if (error.status === 403) return 'This key does not allow it; an admin can issue one with the right scope or prefixes.';
  if (error.status === 429 || error.status === 503) return 'The server is busy or its storage is down; retry in a few seconds.';
  return error.requestId ? `Request id ${error.requestId} identifies it in the server log.` : '';
};

export const ErrorNote = ({ error, retry }: { error: ApiError; retry?: () => void }) => (
  <div class="state error" role="alert">
    <strong>{error.message}</strong>
    <span class="muted">{advice(error)}</span>
    {retry && (
      <button type="button" class="button small" onClick={retry}>
        Retry
      </button>
    )}
  </div>
);

export const Empty = ({ title, children }: { title: string; children?: ComponentChildren }) => (
  <div class="state empty">
    <strong>{title}</strong>
    {children && <div class="muted">{children}</div>}
  </div>
);
