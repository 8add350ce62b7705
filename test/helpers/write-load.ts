import { type HttpAnswer, httpCall } from './http-call.ts';

/** One request of the load, as the client saw it. Times are performance.now() ms. */
export interface Outcome {
  writer: number;
  seq: number;
  start: number;
  end: number;
  /** 0 when no HTTP answer arrived (timeout, reset), with `error` saying why. */
  status: number;
  headers?: Headers;
  body?: any;
  error?: string;
}

export interface WriteLoad {
  outcomes: Outcome[];
  /** Ends every loop after its current request and waits for them. */
  stop(): Promise<void>;
}

export interface WriteLoadOptions {
  writers: number;
  entityPath: string;
  /** Per-request deadline: a slower answer counts as a hang. */
  timeoutMs: number;
  /** Pause after a failed request, as a client honouring a short backoff would. */
  pauseAfterFailureMs: number;
}

/** The value writer `w` sends as its `seq`-th write: unique, so every write makes a version. */
export const loadValue = (writer: number, seq: number) => ({ writer, seq, note: `write ${seq} of writer ${writer}`, pad: 'x'.repeat(256) });

/**
 * A steady write load: `writers` loops, each writing successive values to its own key
 * (`w<writer>`) as fast as answers come, recording every outcome.
 */
export const startWriteLoad = (url: string, options: WriteLoadOptions): WriteLoad => {
  const outcomes: Outcome[] = [];
  let stopping = false;
  const loop = async (writer: number): Promise<void> => {
    for (let seq = 0; !stopping; seq++) {
      const start = performance.now();
      const body = { entity_path: options.entityPath, key: `w${writer}`, value: loadValue(writer, seq) };
      let answer: HttpAnswer | undefined;
      let error: string | undefined;
      try {
        answer = await httpCall(url, 'POST', '/api/v1/entries', body, options.timeoutMs);
      } catch (e) {
        error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      }
      const end = performance.now();
      outcomes.push({ writer, seq, start, end, status: answer?.status ?? 0, headers: answer?.headers, body: answer?.body, error });
      if (!answer || answer.status >= 300) await new Promise((resolve) => setTimeout(resolve, options.pauseAfterFailureMs));
    }
  };
  const loops = Array.from({ length: options.writers }, (_, w) => loop(w));
  return {
    outcomes,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
};

export interface Sample {
  path: string;
  start: number;
  end: number;
  status: number;
  headers?: Headers;
  body?: any;
  error?: string;
}

/**
 * GETs `path` (or a path chosen per request) every `everyMs`, recording each answer, until
 * stopped.
 */
export const startPoller = (url: string, path: string | (() => string), everyMs: number, timeoutMs: number) => {
  const samples: Sample[] = [];
  let stopping = false;
  const done = (async () => {
    while (!stopping) {
      const start = performance.now();
      const target = typeof path === 'string' ? path : path();
      try {
        const res = await httpCall(url, 'GET', target, undefined, timeoutMs);
        samples.push({ path: target, start, end: performance.now(), status: res.status, headers: res.headers, body: res.body });
      } catch (e) {
        samples.push({ path: target, start, end: performance.now(), status: 0, error: String(e) });
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    samples,
    async stop() {
      stopping = true;
      await done;
    },
  };
};
