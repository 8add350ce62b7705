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

/**
 * Load data for a view; answers that arrive after a newer request started are dropped.
 * Quiet reloads (background refreshes, one per live event) are coalesced: while a request is
 * in flight, any number of them make one more request once it is answered, so a burst of
 * events costs two requests at a time at most, and every answer is shown (none is overtaken).
 */
export const useLoad = <T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> => {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: true });
  const generation = useRef(0);
  // The generation of the request in flight (null: none), and whether a quiet reload waits for it.
  const inFlight = useRef<number | null>(null);
  const queued = useRef(false);
  const run = useCallback(load, deps);
  const reload = useCallback(
    (quiet = false) => {
      if (quiet && inFlight.current === generation.current) {
        queued.current = true;
        return;
      }
      const mine = ++generation.current;
      inFlight.current = mine;
      queued.current = false;
      if (!quiet) setState((s) => ({ ...s, loading: true, error: null }));
      const settle = () => {
        if (mine !== generation.current) return;
        inFlight.current = null;
        if (queued.current) {
          queued.current = false;
          reload(true);
        }
      };
      run().then(
        (data) => {
          if (mine === generation.current) setState({ data, error: null, loading: false });
          settle();
        },
        (error: unknown) => {
          if (mine === generation.current) setState((s) => ({ data: quiet ? s.data : null, error: asApiError(error), loading: false }));
          settle();
        },
      );
    },
    [run],
  );
  useEffect(() => {
    reload();
    return () => {
      ++generation.current;
      inFlight.current = null;
      queued.current = false;
    };
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
