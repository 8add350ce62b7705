#!/usr/bin/env node
// Entry point for `cairn` installed as a command; the CLI itself is TypeScript run by Node 24.
await import('../src/cli.ts');
