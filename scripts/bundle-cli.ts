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
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Left to Node's resolution, from node_modules at run time:
 * - pino: a transport or `pino.destination` runs in a worker thread (thread-stream) that loads files
 *   by path, which a bundle does not have;
 * - oidc-provider: only the `emulator` command uses it, and it is large;
 * - pg: it requires its optional native binding (pg-native) when asked to;
 * - ajv: not imported at all, loaded with createRequire by engine/model/schema-validator.ts, as is
 *   the runtime helper the precompiled validators require (dist/engine/model/precompiled-schemas.cjs).
 */
const EXTERNAL = ['pino', 'oidc-provider', 'pg', 'ajv'];

const OUTFILE = 'dist/cli/main.cjs';

/**
 * js-yaml's CommonJS build, not the ES module its `import` condition names: on Node 20 the ES
 * build's module-scope code parses about 3x slower (20,000 contracts: 1.15 s against 0.39 s of CPU,
 * bundled either way; on Node 24 both take 0.4 s). Bundled, the CommonJS build runs inside a
 * function scope, where Node 20 optimises it. Same API, same version.
 */
const JS_YAML_CJS = createRequire(import.meta.url).resolve('js-yaml');

await rm(new URL('../dist/cli', import.meta.url), { recursive: true, force: true });
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: ['dist/engine/cli/main.js'],
  outfile: OUTFILE,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.19',
  // import() of a module in the bundle becomes a call of its wrapper, and of one outside it
  // (node:readline) a require(): the bin runs the file as a vm.Script, which has no loader for import().
  supported: { 'dynamic-import': false },
  external: EXTERNAL,
  alias: { 'js-yaml': JS_YAML_CJS },
  // The modules find files next to them (the precompiled schemas, package.json) from import.meta.url.
  define: { 'import.meta.url': '__bundleUrl' },
  banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  // Not minified: a stack trace from the installed CLI stays readable, and each module's code
  // keeps esbuild's `// dist/engine/...` comment naming its source.
  minify: false,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.entries(result.metafile.outputs);
const bytes = outputs.reduce((sum, [, output]) => sum + output.bytes, 0);
console.error(`bundled the CLI into ${OUTFILE}: ${Math.round(bytes / 1024)} KiB`);
