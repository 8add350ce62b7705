/** What a benchmark or reliability step gets from the runner. */
export interface StepContext {
  /** BENCH_SECONDS: how long each timed load runs. */
  seconds: number;
  /** A short note on what the step is doing now, shown on the progress line. */
  progress(detail: string): void;
}

/** A step's figures (saved to JSON under the step's key) and the lines it prints. */
export interface StepResult<T = unknown> {
  figures: T;
  lines: string[];
}

export interface Step<T = unknown> {
  /** Key in bench/results/latest.json. */
  key: string;
  /** Heading printed before the step's lines. */
  title(ctx: StepContext): string;
  run(ctx: StepContext): Promise<StepResult<T>>;
}

export const pct = (r: number): string => `${(r * 100).toFixed(1)} %`;
