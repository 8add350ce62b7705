import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.ts';

export interface Loaded<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  /** Fetch again; `quiet` keeps showing the current data meanwhile (background refresh). */
  reload(quiet?: boolean): void;
}

const asApiError = (error: unknown): ApiError =>
  error instanceof ApiError ? error : new ApiError(0, 'ERROR', error instanceof Error ? error.message : String(error));

/** Load data for a view; answers that arrive after a newer request started are dropped. */
export const useLoad = <T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> => {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: true });
  const generation = useRef(0);
  const run = useCallback(load, deps);
  const reload = useCallback(
    (quiet = false) => {
      const mine = ++generation.current;
      if (!quiet) setState((s) => ({ ...s, loading: true, error: null }));
      run().then(
        (data) => mine === generation.current && setState({ data, error: null, loading: false }),
        (error: unknown) => mine === generation.current && setState((s) => ({ data: quiet ? s.data : null, error: asApiError(error), loading: false })),
      );
    },
    [run],
  );
  useEffect(() => {
    reload();
    return () => void ++generation.current;
  }, [reload]);
  return { ...state, reload };
};

/** Call `tick` every `ms` while the tab is visible. */
export const useInterval = (tick: () => void, ms: number): void => {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    const timer = setInterval(() => document.visibilityState === 'visible' && saved.current(), ms);
    return () => clearInterval(timer);
  }, [ms]);
};
