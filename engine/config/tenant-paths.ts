/**
 * Globs of the config that select no desired-state file: a tenant's `paths` (each file of the
 * tenant is otherwise only refused as outside its paths, at the file's line) and `desired.paths`
 * (otherwise a run of nothing: "0 valid contracts in 0 files"). The mistake is in the config, so
 * it is said at the config's line. Warnings: a tenant may have no file yet. Pure.
 */
import picomatch from 'picomatch';
import { compareDiagnostics, type Diagnostic } from '../diagnostic/diagnostic.ts';
import type { PathSegment } from '../model/schema-validator.ts';
import { formatPath, type Position } from '../yaml/yaml-source.ts';
import type { Config } from './types.ts';

export interface TenantPathsInput {
  readonly config: Pick<Config, 'tenants' | 'desired'>;
  /** The desired-state files desired.paths selected, repository-relative. */
  readonly desiredFiles: readonly string[];
  /** The config file as messages name it. */
  readonly file: string;
  readonly positionOf: (path: readonly PathSegment[]) => Position;
}

export function tenantPathWarnings(input: TenantPathsInput): Diagnostic[] {
  const { config, desiredFiles, file, positionOf } = input;
  const warnings: Diagnostic[] = [];
  for (const [index, glob] of config.desired.paths.entries()) {
    // As engine/desired/read-files.ts selects the files; a negated glob selects nothing by itself.
    if (glob.startsWith('!')) continue;
    const matches = picomatch(glob);
    if (desiredFiles.some((desired) => matches(desired))) continue;
    const path = ['desired', 'paths', index];
    const { line, column } = positionOf(path);
    const message = `the glob ${JSON.stringify(glob)} of desired.paths matches no file in the repository: no desired state is read through it`;
    warnings.push({ severity: 'warning', code: 'desired-paths', file, line, column, field: formatPath(path), message });
  }
  for (const [tenant, settings] of Object.entries(config.tenants)) {
    for (const [index, glob] of (settings.paths ?? []).entries()) {
      // As engine/desired/validate.ts matches a file against a tenant's paths.
      const matches = picomatch(glob, { dot: true });
      if (desiredFiles.some((desired) => matches(desired))) continue;
      const path = ['tenants', tenant, 'paths', index];
      const { line, column } = positionOf(path);
      const message =
        `the glob ${JSON.stringify(glob)} of tenant ${tenant}'s paths matches none of the ${desiredFiles.length} desired-state files ` +
        `(desired.paths: ${config.desired.paths.join(', ')}); a file of this tenant outside its paths is refused`;
      warnings.push({ severity: 'warning', code: 'tenant-paths', file, line, column, field: formatPath(path), message, tenant });
    }
  }
  return warnings.sort(compareDiagnostics);
}
