#!/usr/bin/env node
// Runs the TypeScript sources directly (no build step): tsx registers its loader, then the CLI runs.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../engine/cli/main.ts');
await runCli();
