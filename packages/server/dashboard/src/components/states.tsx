import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api/client.ts';
import { errorAdvice } from '../api/error-advice.ts';

export const Loading = ({ label = 'Loading…' }: { label?: string }) => (
  <div class="state loading" role="status" aria-live="polite">
    <span class="spinner" aria-hidden="true" />
    {label}
  </div>
);

export const ErrorNote = ({ error, retry }: { error: ApiError; retry?: () => void }) => (
  <div class="state error" role="alert">
    <strong>{error.message}</strong>
    <span class="muted">{errorAdvice(error)}</span>
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
