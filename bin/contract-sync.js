#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build`, which `npm install` and `npm pack` run).
import { runCli } from '../dist/engine/cli/main.js';

await runCli();
