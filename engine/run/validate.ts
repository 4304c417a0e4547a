/** The validate run: every problem of the config and the desired state, at once, one tenant at a time. No network. */
import { validateByTenant } from '../desired/by-tenant.ts';
import { compareDiagnostics, type Diagnostic } from '../diagnostic/diagnostic.ts';
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
    };

export async function runValidate(request: ValidateRequest, effects: RunEffects): Promise<ValidateRunOutcome> {
  // Validate is the scope and read stages alone: it stops after reading.
  effects.onEvent?.({ type: 'phase', phase: 'read-input' });
  const opened = await openRunInput(effects, 'validate', request.where);
  if ('kind' in opened) return opened;
  try {
    const { files, source } = await readRunFiles(opened);
    // One tenant at a time: nothing is kept of a tenant but its diagnostics and counts.
    const desired = await validateByTenant(files, opened.config, { tenant() {}, restart() {} });
    const hygiene = await checkSecretsHygiene(
      effects,
      { ...opened, source, files },
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
    };
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { kind: 'git-error', code: error.code, message: error.message };
  } finally {
    opened.close();
  }
}
