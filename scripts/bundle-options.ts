/**
 * How the CLI's code is bundled: by scripts/bundle-cli.ts into dist/cli/main.cjs, and by
 * bench/parse-workers.ts into the child it measures, so that the bench runs the code as the CLI
 * runs it. Each adds its entry, its output and the banner that defines `__bundleUrl`: the URL the
 * bundled modules find their files from (the precompiled schemas, package.json), as
 * `import.meta.url` is replaced by it.
 */
import { createRequire } from 'node:module';
import type { BuildOptions } from 'esbuild';

/**
 * Left to Node's resolution, from node_modules at run time:
 * - pino: a transport or `pino.destination` runs in a worker thread (thread-stream) that loads files
 *   by path, which a bundle does not have;
 * - oidc-provider: only the `emulator` command uses it, and it is large;
 * - pg: it requires its optional native binding (pg-native) when asked to;
 * - ajv: not imported at all, loaded with createRequire by engine/model/schema-validator.ts, as is
 *   the runtime helper the precompiled validators require (dist/engine/model/precompiled-schemas.cjs);
 * - the OpenTelemetry SDK: only a run with OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal endpoint)
 *   set loads it (engine/run/telemetry-run.ts); left out, the bundle every start reads is as it was.
 */
const EXTERNAL = ['pino', 'oidc-provider', 'pg', 'ajv', '@opentelemetry/*'];

/**
 * js-yaml's CommonJS build, not the ES module its `import` condition names: on Node 20 the ES
 * build's module-scope code parses about 3x slower (20,000 contracts: 1.15 s against 0.39 s of CPU,
 * bundled either way; on Node 24 both take 0.4 s). Bundled, the CommonJS build runs inside a
 * function scope, where Node 20 optimises it. Same API, same version.
 */
const JS_YAML_CJS = createRequire(import.meta.url).resolve('js-yaml');

export const CLI_BUNDLE_OPTIONS = {
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
  // Not minified: a stack trace from the installed CLI stays readable, and each module's code
  // keeps esbuild's `// dist/engine/...` comment naming its source.
  minify: false,
  legalComments: 'none',
  logLevel: 'warning',
} as const satisfies BuildOptions;
