#!/usr/bin/env node
// Runs the bundled CLI (dist/cli/main.cjs, built by `npm run build`, which `npm install` and `npm pack` run).
import { cacheNameOf, codeCacheDir, runBundle } from './code-cache.js';
import { cliV8Flags, restartOptions } from './v8-flags.js';

// Node's modules through process.getBuiltinModule, as in bin/code-cache.js (which says why).
const { existsSync } = process.getBuiltinModule('node:fs');
const module = process.getBuiltinModule('node:module');
const { fileURLToPath } = process.getBuiltinModule('node:url');

// V8 flags that size the heap work only from node's start: where this run is worth it, node starts
// again with them, as this same process (bin/v8-flags.js says why and when). process.execve exists
// on Node >= 22.15, not on Windows; it does not return, and a failed exec aborts the process, so
// node's binary must still be there (an upgrade may have replaced it).
const restart = restartOptions({
  v8Version: process.versions.v8,
  execArgv: process.execArgv,
  nodeOptions: process.env.NODE_OPTIONS,
  command: cacheNameOf(process.argv.slice(2)),
});
if (restart !== undefined && typeof process.execve === 'function' && existsSync(process.execPath)) {
  process.execve(process.execPath, [process.execPath, ...restart, ...process.argv.slice(1)], process.env);
}

// Before the CLI's code is loaded, so that all of it runs under them (bin/v8-flags.js says why).
// node:v8 is loaded only where there are flags to set (Node 20): loading it costs a millisecond.
const flags = cliV8Flags(process.versions.v8);
if (flags.length > 0) {
  const v8 = process.getBuiltinModule('node:v8');
  for (const flag of flags) {
    const name = flag.split('=')[0];
    if (!process.execArgv.some((arg) => arg.split('=')[0] === name)) v8.setFlagsFromString(flag);
  }
}

// The bundle brings its own code cache (bin/code-cache.js). Node >= 22.1 keeps one for what it
// loads from node_modules (yaml, ajv, pino, pg), as npm 11 does: in the system's temporary
// directory, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns both off. It never throws;
// on Node 20 the function does not exist.
module.enableCompileCache?.();

const bundle = fileURLToPath(new URL('../dist/cli/main.cjs', import.meta.url));
if (!existsSync(bundle)) {
  process.stderr.write('contract-sync: no build in dist/: run `npm run build` (npm install runs it through prepare)\n');
  process.exit(1);
}
const cacheDir = codeCacheDir(process.env, process.getuid?.());
const { exports: cli } = runBundle(bundle, { cacheDir, name: cacheNameOf(process.argv.slice(2)), v8Flags: flags });
await cli.runCli();
