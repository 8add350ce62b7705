#!/usr/bin/env node
// Session hooks for coding agents (Claude Code, Cursor): at session start, print what Cairn
// knows about the repository being worked on; at session end, record what the session
// decided. Plain JavaScript with no dependencies, run by Node.js 22 or 24; it calls the
// `cairn` command (CAIRN_BIN, else `npx -y cairn-memory`) with CAIRN_HTTP_URL and
// CAIRN_API_KEY from the environment.
//
//   node cairn-hook.mjs session-start   < hook JSON on stdin (cwd, session_id)
//   node cairn-hook.mjs session-end     < hook JSON on stdin (cwd, session_id, transcript_path)
//
// A hook never stands in the agent's way: when Cairn cannot be reached it says so on stderr
// and exits 0.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';

const [event] = process.argv.slice(2);
const readStdin = () => {
  try {
    return JSON.parse(readFileSync(0, 'utf8') || '{}');
  } catch {
    return {};
  }
};
const input = readStdin();
const cwd = input.cwd || input.workspace_roots?.[0] || process.cwd();
const sessionId = String(input.session_id || input.conversation_id || `session-${Date.now()}`);

/** `repos/<owner>/<repo>` from the origin remote, as the GitHub connector names it; else the directory's name. */
const repositoryPath = () => {
  try {
    const url = execFileSync('git', ['remote', 'get-url', 'origin'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const match = /[/:]([^/:]+)\/([^/]+?)(?:\.git)?$/.exec(url);
    if (match) return `repos/${match[1]}/${match[2]}`;
  } catch {
    // Not a git checkout, or no origin: fall back to the directory.
  }
  return `repos/local/${basename(cwd).replace(/[^\w.-]/g, '-') || 'workspace'}`;
};

const git = (args) => {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};

const cairn = (args, stdin) => {
  const bin = process.env.CAIRN_BIN;
  const [command, prefix] = bin ? [bin, []] : ['npx', ['-y', 'cairn-memory']];
  return spawnSync(command, [...prefix, ...args], { input: stdin, encoding: 'utf8', env: process.env, timeout: 60_000 });
};

const fail = (what, result) => {
  process.stderr.write(`cairn hook: ${what} failed${result.stderr ? `: ${result.stderr.trim()}` : ''}\n`);
  process.exit(0);
};

/** The last thing the assistant said, from a Claude Code transcript (JSON lines): usually its summary of the session. */
const lastAssistantText = (path) => {
  if (!path || !existsSync(path)) return null;
  const lines = readFileSync(path, 'utf8').trim().split('\n').reverse();
  for (const line of lines) {
    try {
      const record = JSON.parse(line);
      const message = record.message ?? record;
      if ((record.type ?? message.role) !== 'assistant') continue;
      const content = Array.isArray(message.content) ? message.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n') : message.content;
      if (typeof content === 'string' && content.trim()) return content.trim().slice(0, 4000);
    } catch {
      // A line that is not JSON says nothing about the session.
    }
  }
  return null;
};

const repo = repositoryPath();
if (event === 'session-start') {
  const result = cairn(['briefing', '--entity-path', repo, '--max-chars', '6000', '--discredited', 'apart']);
  if (result.status !== 0) fail('briefing', result);
  process.stdout.write(`What Cairn (shared memory) knows about ${repo}:\n\n${result.stdout}\n`);
  process.stdout.write(`\nRecord decisions as JSON lines in .cairn/decisions.jsonl ({"key": "...", "value": ...}); they are saved to ${repo}/decisions when the session ends.\n`);
} else if (event === 'session-end') {
  // Decisions the agent noted during the session, stored together (one batch: all or none).
  const file = join(cwd, '.cairn', 'decisions.jsonl');
  const session = {
    entity_path: `${repo}/sessions`,
    key: sessionId,
    value: { ended_at: new Date().toISOString(), branch: git(['symbolic-ref', '--short', 'HEAD']), commit: git(['rev-parse', 'HEAD']), summary: lastAssistantText(input.transcript_path) },
    memory_type: 'observation',
    tags: ['session'],
  };
  const lines = [JSON.stringify(session)];
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const decision = JSON.parse(line);
        lines.push(JSON.stringify({ entity_path: `${repo}/decisions`, memory_type: 'decision', ...decision }));
      } catch {
        process.stderr.write(`cairn hook: skipping a line of ${file} that is not JSON\n`);
      }
    }
  }
  const result = cairn(['write-batch', '-'], `${lines.slice(0, 100).join('\n')}\n`);
  if (result.status !== 0) fail('recording the session', result);
  // Recorded: start the next session with an empty list (kept aside once, in case it is wanted).
  if (existsSync(file)) {
    rmSync(`${file}.saved`, { force: true });
    renameSync(file, `${file}.saved`);
  }
  process.stderr.write(`cairn hook: ${result.stdout.trim().split('\n').at(-1)}\n`);
} else {
  process.stderr.write('usage: cairn-hook.mjs session-start|session-end < hook JSON\n');
  process.exit(2);
}
