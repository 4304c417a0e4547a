/** The validate run: every problem of the config and the desired state, at once, one tenant at a time. No network. */
import { validateByTenant } from '../desired/by-tenant.ts';
import { compareDiagnostics, type Diagnostic } from '../diagnostic/diagnostic.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { ContractSet } from '../desired/types.ts';
import { evaluateContractPolicies, type EvaluateOptions } from '../policy/evaluate.ts';
import { utcDate } from '../policy/exceptions.ts';
import { findingAsDiagnostic } from '../policy/finding-diagnostic.ts';
import type { CompiledPolicies } from '../policy/types.ts';
import { GitError } from '../git/errors.ts';
import type { PlanSource } from '../plan/types.ts';
import { openRunInput, readRunFiles } from './input.ts';
import { checkSecretsHygiene } from './secrets-hygiene.ts';
import type { RunEffects, RunUnread, RunWhere } from './types.ts';

export interface ValidateRequest {
  readonly kind: 'validate';
  readonly where: RunWhere;
}

export type ValidateRunOutcome =
  | RunUnread
  | {
      readonly kind: 'validated';
      readonly source: PlanSource;
      /** The config's warnings (hygiene included), then the desired state's errors and warnings. */
      readonly configWarnings: readonly Diagnostic[];
      readonly errors: readonly Diagnostic[];
      readonly warnings: readonly Diagnostic[];
      readonly contracts: number;
      readonly files: number;
      /** The config's `on: contract` rules over every valid desired contract. */
      readonly findings: readonly Finding[];
      /** The findings as diagnostics at their contract's position (engine/policy/finding-diagnostic.ts), in file order. */
      readonly policyDiagnostics: readonly Diagnostic[];
    };

/** The findings of the rules on one tenant's valid contracts, as findings and as diagnostics. */
function checkContracts(
  policies: CompiledPolicies,
  contractSets: readonly ContractSet[],
  options: EvaluateOptions,
): { findings: Finding[]; diagnostics: Diagnostic[] } {
  const findings: Finding[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const set of contractSets) {
    for (const contract of set.contracts) {
      const found = evaluateContractPolicies(
        policies,
        { tenant: set.tenant, id: contract.id, object: contract.fields, file: set.file, line: contract.line },
        options,
      );
      findings.push(...found);
      diagnostics.push(...found.map((finding) => findingAsDiagnostic(finding, contract.column)));
    }
  }
  return { findings, diagnostics };
}

export async function runValidate(request: ValidateRequest, effects: RunEffects): Promise<ValidateRunOutcome> {
  // Validate is the scope and read stages alone: it stops after reading.
  effects.onEvent?.({ type: 'phase', phase: 'read-input' });
  const opened = await openRunInput(effects, 'validate', request.where);
  if ('kind' in opened) return opened;
  try {
    const { files, source } = await readRunFiles(opened);
    // One tenant at a time: nothing is kept of a tenant but its diagnostics, counts and findings.
    const options = { today: utcDate(effects.clock.now()) };
    let checked: { findings: Finding[]; diagnostics: Diagnostic[] } = { findings: [], diagnostics: [] };
    const desired = await validateByTenant(files, opened.config, {
      tenant(_tenant, contractSets) {
        const found = checkContracts(opened.policies, contractSets, options);
        checked.findings.push(...found.findings);
        checked.diagnostics.push(...found.diagnostics);
      },
      restart() {
        checked = { findings: [], diagnostics: [] };
      },
    });
    const hygiene = await checkSecretsHygiene(
      effects,
      { ...opened, source, desiredPaths: files.paths },
      { ...(request.where.config === undefined ? {} : { config: request.where.config }) },
    );
    // Warnings only: hygiene never changes the outcome.
    const configWarnings = [...opened.configDiagnostics, ...hygiene].sort(compareDiagnostics);
    return {
      kind: 'validated',
      source,
      configWarnings,
      errors: desired.errors,
      warnings: desired.warnings,
      contracts: desired.contracts,
      files: desired.files,
      findings: checked.findings,
      policyDiagnostics: checked.diagnostics.sort(compareDiagnostics),
    };
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { kind: 'git-error', code: error.code, message: error.message };
  } finally {
    opened.close();
  }
}
