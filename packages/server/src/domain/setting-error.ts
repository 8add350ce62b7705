/**
 * A failure only the operator can mend, by changing a setting or waiting on what it names: a
 * bad value (config.ts), a data directory this user cannot make or write, one that another
 * process holds (the filesystem store). Whichever layer finds it raises it, and every command
 * says it the same way, `cairn: <message>` in one line with `exitCode`
 * (cli/command-exit.ts sayFailure), never as a stack trace or a log line.
 */
export class SettingError extends Error {
  /**
   * The setting is good but what it names is held by another process until that one stops
   * (exit 1); otherwise no run can use the setting as it is (exit 2, as bad usage).
   */
  readonly held: boolean;

  constructor(message: string, options: { held?: boolean } = {}) {
    super(message);
    this.name = 'SettingError';
    this.held = options.held === true;
  }

  /** The exit code of the commands (README): 2 a setting to change, 1 a place another process holds. */
  get exitCode(): 1 | 2 {
    return this.held ? 1 : 2;
  }
}
