#!/usr/bin/env node
// Runs the bundled CLI (dist/cli/, built by `npm run build`, which `npm install` and `npm pack` run).
import module from 'node:module';
import v8 from 'node:v8';
import { cliV8Flags } from './v8-flags.js';

// Before the CLI's code is loaded, so that all of it runs under them (bin/v8-flags.js says why).
for (const flag of cliV8Flags(process.versions.v8)) {
  const name = flag.split('=')[0];
  if (!process.execArgv.some((arg) => arg.split('=')[0] === name)) v8.setFlagsFromString(flag);
}

// Node >= 22.1 keeps V8's compiled code of the CLI's modules between runs, as npm 11 does: in the
// system's temporary directory, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
// It never throws; on Node 20 the function does not exist.
module.enableCompileCache?.();

const entry = new URL('../dist/cli/main.js', import.meta.url);
let cli;
try {
  cli = await import(entry.href);
} catch (error) {
  // Only a missing build gets this hint; a module missing inside the build is a real error.
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || error.url !== entry.href) throw error;
  process.stderr.write('contract-sync: no build in dist/: run `npm run build` (npm install runs it through prepare)\n');
  process.exit(1);
}
await cli.runCli();
