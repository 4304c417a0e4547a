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
import { readFile, rm, writeFile } from 'node:fs/promises';
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

// esbuild writes code in ASCII (charset's default) but keeps comments as they are, and a few of the
// packages' comments hold other characters (p-queue's emoji). One of them makes the whole source a
// string of two-byte characters when the bin reads it: twice the memory, which in a pull request's
// plan set off a full garbage collection (8 % of its CPU on Node 24). In a comment, \uXXXX is as good.
const written = await readFile(new URL(`../${OUTFILE}`, import.meta.url), 'utf8');
await writeFile(new URL(`../${OUTFILE}`, import.meta.url), asciiOnly(written));

/** `source` with every character outside ASCII written as \uXXXX (a pair of them beyond the BMP). */
function asciiOnly(source: string): string {
  return source.replace(/[^\0-\x7f]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const outputs = Object.entries(result.metafile.outputs);
const bytes = outputs.reduce((sum, [, output]) => sum + output.bytes, 0);
console.error(`bundled the CLI into ${OUTFILE}: ${Math.round(bytes / 1024)} KiB`);
