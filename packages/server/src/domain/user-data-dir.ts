import { userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * Where `cairn mcp` keeps memory when nothing names a place: a directory of the user's own
 * (XDG's data home), since a client launches the command from wherever it runs, and the
 * server's default (/data/.cairn, a container's volume) is rarely writable on a workstation.
 */
export const userDataDir = (env: Record<string, string | undefined>): string => {
  // XDG: a relative XDG_DATA_HOME is ignored. An empty or relative HOME would put memory under
  // whatever directory the client launched the command from: the account's own home instead.
  if (env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME)) return join(env.XDG_DATA_HOME, 'cairn');
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : userInfo().homedir;
  return join(home, '.local', 'share', 'cairn');
};
