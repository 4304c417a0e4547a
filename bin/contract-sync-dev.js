#!/usr/bin/env node
// Runs the TypeScript sources through tsx, without a build: for tests and development in this
// repository. Not published (package.json "files"); users run bin/contract-sync.js.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../engine/cli/main.ts');
await runCli();
