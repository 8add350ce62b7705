/**
 * One progress line on stderr: a bar over the steps, the current step, what it is doing and
 * the time so far. On a terminal it redraws in place (and every second, so the clock moves);
 * in a log it prints a line per change, so a CI log shows where a run stopped.
 */
export interface Progress {
  step(index: number, name: string): void;
  detail(text: string): void;
  /** Clears the line so ordinary output can be printed, then redraws it. */
  print(lines: string[]): void;
  done(): void;
}

const WIDTH = 24;
const clock = (ms: number): string => {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};

export const startProgress = (total: number, stream: NodeJS.WriteStream = process.stderr): Progress => {
  const started = performance.now();
  const tty = stream.isTTY === true;
  let index = 0;
  let name = '';
  let detail = '';
  let lastLogged = '';
  const line = (): string => {
    const filled = Math.round((index / total) * WIDTH);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(WIDTH - filled)}`;
    return `[${bar}] ${index}/${total} ${name}${detail ? ` · ${detail}` : ''} · ${clock(performance.now() - started)}`;
  };
  const render = () => {
    if (tty) {
      const text = line().slice(0, (stream.columns ?? 120) - 1);
      stream.write(`\r\x1b[2K${text}`);
      return;
    }
    // In a log: one line per change of step or detail, not per clock tick.
    const key = `${index}|${name}|${detail}`;
    if (key !== lastLogged) {
      lastLogged = key;
      stream.write(`${line()}\n`);
    }
  };
  const timer = tty ? setInterval(render, 1000) : undefined;
  timer?.unref();
  const clear = () => {
    if (tty) stream.write('\r\x1b[2K');
  };
  return {
    step(i, n) {
      index = i;
      name = n;
      detail = '';
      render();
    },
    detail(text) {
      detail = text;
      render();
    },
    print(lines) {
      clear();
      for (const l of lines) process.stdout.write(`${l}\n`);
      render();
    },
    done() {
      if (timer) clearInterval(timer);
      index = total;
      name = 'done';
      detail = '';
      render();
      if (tty) stream.write('\n');
    },
  };
};
