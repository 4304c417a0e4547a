/** Desired state across files: per-file parsing plus the cross-file checks of docs/architecture.md section 5. Pure. */
import picomatch from 'picomatch';
import { compareText } from '../text/compare-text.ts';
import type { Config } from '../config/types.ts';
import { compareDiagnostics, type Diagnostic } from '../diagnostic/diagnostic.ts';
import type { Position, YamlLimits } from '../yaml/yaml-source.ts';
import { parseDesiredFile } from './parse-file.ts';
import type { ContractSet, DesiredFile, DesiredStateResult } from './types.ts';

/** A cross-file problem at a recorded position: the files' YAML trees are gone by then. */
function crossFileDiagnostic(
  file: string,
  { line, column }: Position,
  code: string,
  message: string,
  about: Pick<Diagnostic, 'field'> & Partial<Diagnostic>,
): Diagnostic {
  return { severity: 'error', code, file, line, column, message, ...about };
}

type TenantMatchers = ReadonlyMap<string, (path: string) => boolean>;

function tenantMatchers(config: Pick<Config, 'tenants'>): TenantMatchers {
  const matchers = new Map<string, (path: string) => boolean>();
  for (const [tenant, settings] of Object.entries(config.tenants)) {
    if (settings.paths) matchers.set(tenant, picomatch([...settings.paths], { dot: true }));
  }
  return matchers;
}

export function validateDesiredState(files: readonly DesiredFile[], config: Pick<Config, 'tenants'>, limits?: YamlLimits): DesiredStateResult {
  const diagnostics: Diagnostic[] = [];
  const contractSets: ContractSet[] = [];
  const matchers = tenantMatchers(config);
  const knownTenants = Object.keys(config.tenants);
  // tenant -> ContractId -> where it was first declared
  const declared = new Map<string, Map<string, string>>();

  for (const file of [...files].sort((a, b) => compareText(a.path, b.path))) {
    const parsed = parseDesiredFile(file, limits);
    // A loop, not push(...list): a file with a million problems would overflow the stack as arguments.
    for (const diagnostic of parsed.diagnostics) diagnostics.push(diagnostic);
    const { contractSet, tenantPosition } = parsed;
    if (!contractSet || !tenantPosition) continue;

    const { tenant } = contractSet;
    if (!Object.hasOwn(config.tenants, tenant)) {
      const message = `tenant "${tenant}" is not configured in contract-sync.yaml (known: ${knownTenants.join(', ') || 'none'})`;
      diagnostics.push(crossFileDiagnostic(file.path, tenantPosition, 'unknown-tenant', message, { field: 'tenant', tenant }));
      continue;
    }
    const allowed = matchers.get(tenant);
    if (allowed && !allowed(file.path)) {
      const message = `this file may not declare tenant "${tenant}": it is outside the tenant's paths (tenants.${tenant}.paths in the config: ${config.tenants[tenant]!.paths!.join(', ')})`;
      diagnostics.push(crossFileDiagnostic(file.path, tenantPosition, 'tenant-path', message, { field: 'tenant', tenant }));
      continue;
    }

    const ids = declared.get(tenant) ?? new Map<string, string>();
    declared.set(tenant, ids);
    const unique = contractSet.contracts.filter((contract) => {
      const first = ids.get(contract.id);
      if (first === undefined) {
        ids.set(contract.id, `${file.path}:${contract.line}:${contract.column}`);
        return true;
      }
      const message = `contract ${contract.id} of tenant "${tenant}" is already declared at ${first}`;
      const about = { field: `contracts.${contract.id}`, tenant, contractId: contract.id };
      diagnostics.push(crossFileDiagnostic(file.path, contract, 'duplicate-contract', message, about));
      return false;
    });
    contractSets.push({ ...contractSet, contracts: unique });
  }

  diagnostics.sort(compareDiagnostics);
  return {
    contractSets,
    errors: diagnostics.filter((d) => d.severity === 'error'),
    warnings: diagnostics.filter((d) => d.severity === 'warning'),
  };
}
