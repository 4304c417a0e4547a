#!/usr/bin/env node
// Runs the bundled CLI (dist/cli/, built by `npm run build`, which `npm install` and `npm pack` run).
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
