import { constants } from 'node:os';
import { CairnError } from 'cairn-memory-client';
import { InvalidArgumentError } from 'commander';
import { SettingError } from '../domain/setting-error.ts';

/** Exit codes of the commands (README, "The cairn client commands"): 1 refused or failed, 2 bad usage or configuration, 3 not found. */
export const EXIT_REFUSED = 1;
export const EXIT_USAGE = 2;
export const EXIT_NOT_FOUND = 3;

/** A failure the command reports as one line, `cairn: <message>`, and exits with `exitCode`. */
export class CommandError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number) {
    super(message);
    this.name = 'CommandError';
    this.exitCode = exitCode;
  }
}

/**
 * The exit code of every command's failure: its own for a CommandError and a setting to change
 * (SettingError: 2, or 1 for a place another process holds), 2 for bad usage, 3 for what the
 * server does not have, 1 for anything else (a refusal, a failure).
 */
export const exitCodeOf = (error: unknown): number => {
  if (error instanceof CommandError || error instanceof SettingError) return error.exitCode;
  if (error instanceof InvalidArgumentError) return EXIT_USAGE;
  if (error instanceof CairnError && error.code === 'NOT_FOUND') return EXIT_NOT_FOUND;
  return EXIT_REFUSED;
};

/**
 * Says a failure as every command does, in one line on stderr, `cairn: <message>` (`cairn mcp:`
 * from that command, whose stdout is the protocol), and answers the exit code to end with
 * (exitCodeOf). The one place a setting to change (SettingError) becomes what the operator
 * sees, whichever layer raised it.
 */
export const sayFailure = (error: unknown, command = 'cairn'): number => {
  process.stderr.write(`${command}: ${(error as Error).message}\n`);
  return exitCodeOf(error);
};

/** Set once SIGINT or SIGTERM has asked the command to stop (see withCleanup). */
let stoppedBy: NodeJS.Signals | null = null;

/**
 * A command's action that reports any failure in one line instead of a stack trace. It exits
 * only once `work` has settled, so every `finally` inside it (closing the store, which
 * releases the data directory's lock; removing a partial file) has run first.
 */
export const reportingFailures =
  <A extends unknown[]>(work: (...args: A) => Promise<void>) =>
  async (...args: A): Promise<void> => {
    try {
      await work(...args);
    } catch (error) {
      // After a signal, a failure is the signal's doing: that was said, with its own exit code.
      if (stoppedBy === null) process.exitCode = sayFailure(error);
      // Exit now rather than wait for the event loop to empty: nothing is left to close, and a
      // connection left half-open by a failure must not keep a failed command alive.
      process.exit();
    }
  };

/** Cleanups of work still running, for a signal to run before the process ends. */
const pending = new Set<() => Promise<void>>();

const onSignal = (signal: NodeJS.Signals): void => {
  stoppedBy = signal;
  // Set first: whichever way the process now ends, it ends with the signal's code.
  process.exitCode = 128 + constants.signals[signal];
  process.stderr.write(`cairn: stopped by ${signal}\n`);
  void Promise.allSettled([...pending].map((cleanup) => cleanup())).then(() => process.exit());
};

let listening = false;

/**
 * Runs `work`, then `cleanup` however it ends, including when Ctrl-C (SIGINT) or a container's
 * stop (SIGTERM) ends the command meanwhile: the signal runs every pending cleanup, then exits
 * 130 or 143. Listening `once` leaves a second signal its default: an immediate end for
 * someone who will not wait. `cleanup` runs at most once however many ask for it.
 */
export const withCleanup = async <T>(cleanup: () => Promise<void>, work: () => Promise<T>): Promise<T> => {
  let cleaning: Promise<void> | undefined;
  const once = (): Promise<void> => (cleaning ??= cleanup());
  if (!listening) {
    listening = true;
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  pending.add(once);
  try {
    return await work();
  } finally {
    pending.delete(once);
    await once();
  }
};

/**
 * Writes `text` to standard output, resolving once it is written. A reader that went away
 * (EPIPE: `cairn read … | head -c 10`) ends the command quietly, with exit code 0 as a closed
 * pipe ends other commands that do not die of SIGPIPE; any other failure to write (ENOSPC, a
 * full disk) is one line, `cairn: cannot write the output: …`, with exit code 1. Never a stack
 * trace: unheard, the stream's 'error' event would end the process with one.
 */
export const printOut = (text: string): Promise<void> =>
  new Promise((resolve) => {
    const failed = (error: unknown): void => {
      if ((error as NodeJS.ErrnoException).code !== 'EPIPE') {
        process.stderr.write(`cairn: cannot write the output: ${(error as Error).message}\n`);
        process.exitCode = EXIT_REFUSED;
      }
      process.exit();
    };
    process.stdout.on('error', failed);
    try {
      process.stdout.write(text, (error) => {
        if (error) return failed(error);
        process.stdout.off('error', failed);
        resolve();
      });
    } catch (error) {
      // A file as standard output is written synchronously: its failure is thrown here.
      failed(error);
    }
  });
