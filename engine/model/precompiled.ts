/**
 * The validators the build compiles from the schemas (scripts/precompile-schemas.ts), in two files:
 * `startup`, what every command that reads a repository checks, and `run`, what only a run that
 * sends, reads live or reads a saved plan checks. The sources have none: every schema compiles on
 * first use. The build writes its own dist/engine/model/precompiled.js over tsc's output of this
 * module, one that requires the first file in a way esbuild follows, so that the CLI's bundle holds
 * it, and its code cache (bin/code-cache.js) its compiled code.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { SCHEMA_FORMATS } from './schema-formats.ts';

/** A file's validators by schemaKey, given the runtime's format functions. */
export type PrecompiledFactory = (formats: typeof SCHEMA_FORMATS) => Record<string, ValidateFunction>;

export const PRECOMPILED: Readonly<Record<'startup' | 'run', () => PrecompiledFactory | undefined>> = {
  startup: () => undefined,
  run: () => undefined,
};
