/**
 * Build step (after tsc and precompile-schemas, `npm run build`): bundles the compiled CLI
 * (dist/engine/cli/main.js) with esbuild into one CommonJS file, dist/cli/main.cjs, which
 * bin/contract-sync.js runs. Resolving and loading some 90 files of dist/ and the CommonJS files of
 * yaml and the others is a quarter of a plan's start-up; one file is not.
 *
 * One file, so that the bin can keep V8's code of what a run compiled in a code cache of its own
 * (bin/code-cache.js says why). What main.ts and the commands import with `import()` is still
 * evaluated only by the commands that need it: esbuild wraps each such module in a function that
 * runs at the first import, and packages left to Node's resolution are required there, not at the
 * top: `--version` runs little of the file, validate neither openid-client nor the HTTP client
 * (test/package/pack-install.test.ts). The library (`import ... from 'contract-sync'`) stays the
 * unbundled tsc output in dist/engine/.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { CLI_BUNDLE_OPTIONS } from './bundle-options.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUTFILE = 'dist/cli/main.cjs';

await rm(new URL('../dist/cli', import.meta.url), { recursive: true, force: true });
const result = await build({
  ...CLI_BUNDLE_OPTIONS,
  absWorkingDir: ROOT,
  entryPoints: ['dist/engine/cli/main.js'],
  outfile: OUTFILE,
  banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  metafile: true,
});

const outputs = Object.entries(result.metafile.outputs);
const bytes = outputs.reduce((sum, [, output]) => sum + output.bytes, 0);
console.error(`bundled the CLI into ${OUTFILE}: ${Math.round(bytes / 1024)} KiB`);
