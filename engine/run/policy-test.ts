/**
 * The `policy test` run: the config's rules over YAML cases, with no repository state and no
 * service (as `opa test` and `kyverno test` run rules without a cluster). A case gives a contract,
 * optionally the known contract (then `on: change` rules see it as oldObject, and the ops are what
 * the planner would send), and the findings it expects; a case passes when the findings are
 * exactly those. The cases are read from the files under DIR; parsing and evaluating them is pure.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/types.ts';
import { compareDiagnostics, type Diagnostic } from '../diagnostic/diagnostic.ts';
import type { Finding } from '../diagnostic/finding.ts';
import { CONTRACT_ID_PATTERN, contractSchema, TENANT_PATTERN } from '../model/json-schemas.ts';
import type { JsonSchema } from '../model/json-schema-type.ts';
import { storedMemberSchema } from '../model/members.ts';
import { compileSchema, type SchemaCheck } from '../model/schema-validator.ts';
import type { ContractFields } from '../model/types.ts';
import { diffContract } from '../plan/diff.ts';
import { evaluateChangePolicies, evaluateContractPolicies } from '../policy/evaluate.ts';
import { utcDate } from '../policy/exceptions.ts';
import type { CompiledPolicies } from '../policy/types.ts';
import { compareText } from '../text/compare-text.ts';
import { diagnosticAt, parseYamlSource, positionOf } from '../yaml/yaml-source.ts';
import { readRepoConfig } from './config.ts';
import type { RunPlace, RunUnread } from './types.ts';

export interface PolicyTestRequest {
  readonly kind: 'policy-test';
  readonly where: { readonly repo: string; readonly config?: string };
  /** The directory of the case files, relative to the working directory. */
  readonly dir: string;
}

/** What a case expects of one finding; a key left out matches anything. */
export interface ExpectedFinding {
  readonly policy: string;
  readonly action?: Finding['action'];
  readonly message?: string;
  readonly exception?: 'excepted' | 'expired' | 'none';
}

export interface PolicyCaseResult {
  /** The case file, relative to the working directory, and the line of the case. */
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly passed: boolean;
  readonly expected: readonly ExpectedFinding[];
  readonly found: readonly Finding[];
  /** Expected findings no finding matched, and findings no expectation matched. */
  readonly missing: readonly ExpectedFinding[];
  readonly unexpected: readonly Finding[];
}

export type PolicyTestOutcome =
  | Extract<RunUnread, { readonly kind: 'invalid-config' | 'bad-request' }>
  | {
      readonly kind: 'policy-tested';
      readonly results: readonly PolicyCaseResult[];
      /** Problems of the case files: a file with one runs none of its cases. */
      readonly diagnostics: readonly Diagnostic[];
    };

interface RawCase {
  name: string;
  tenant?: string;
  id?: string;
  today?: string;
  contract: ContractFields;
  known?: ContractFields;
  knownFrom?: 'state' | 'live';
  expect: ExpectedFinding[];
}

/** The schema of a case file; its contracts are checked as desired and known contracts are. */
function caseFileSchema(): JsonSchema {
  return {
    type: 'object',
    properties: {
      cases: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1 },
            tenant: { type: 'string', pattern: TENANT_PATTERN },
            id: { type: 'string', pattern: CONTRACT_ID_PATTERN },
            today: { type: 'string', format: 'date' },
            contract: { $ref: '#/$defs/Contract' },
            known: { $ref: '#/$defs/KnownContract' },
            knownFrom: { enum: ['state', 'live'] },
            expect: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  policy: { type: 'string', minLength: 1 },
                  action: { enum: ['deny', 'warn', 'override'] },
                  message: { type: 'string' },
                  exception: { enum: ['excepted', 'expired', 'none'] },
                },
                required: ['policy'],
                additionalProperties: false,
              },
            },
          },
          required: ['name', 'contract', 'expect'],
          additionalProperties: false,
        },
      },
    },
    required: ['cases'],
    additionalProperties: false,
    $defs: { Contract: contractSchema(), KnownContract: contractSchema(storedMemberSchema) },
  };
}

let check: SchemaCheck | undefined;

/** Defaults of a case: what a plan would give a contract of tenant `test`. */
const DEFAULT_TENANT = 'test';
const DEFAULT_ID = 'test';

/** Reads one case file: its cases with their lines, or its problems. Pure. */
export function parseCaseFile(file: string, content: string | Uint8Array): { cases: { line: number; value: RawCase }[]; diagnostics: Diagnostic[] } {
  const parsed = parseYamlSource(file, content);
  if (!parsed.ok) return { cases: [], diagnostics: parsed.diagnostics };
  check ??= compileSchema(caseFileSchema());
  const issues = check(parsed.value);
  const diagnostics = [
    ...parsed.diagnostics,
    ...issues.map((issue) => diagnosticAt(parsed.source, { path: issue.path, atKey: issue.atKey, code: 'policy-test', message: issue.message })),
  ].sort(compareDiagnostics);
  if (diagnostics.some((d) => d.severity === 'error')) return { cases: [], diagnostics };
  const { cases } = parsed.value as { cases: RawCase[] };
  return { cases: cases.map((value, index) => ({ line: positionOf(parsed.source, ['cases', index]).line, value })), diagnostics };
}

function matches(expected: ExpectedFinding, finding: Finding): boolean {
  if (expected.policy !== finding.check) return false;
  if (expected.action !== undefined && expected.action !== finding.action) return false;
  if (expected.message !== undefined && expected.message !== finding.message) return false;
  if (expected.exception !== undefined && expected.exception !== (finding.exception?.state ?? 'none')) return false;
  return true;
}

/** The findings of the rules on one case, as plan would find them. Pure. */
export function findingsOfCase(policies: CompiledPolicies, config: Pick<Config, 'collections'>, value: RawCase, today: string): Finding[] {
  const contract = { tenant: value.tenant ?? DEFAULT_TENANT, id: value.id ?? DEFAULT_ID, object: value.contract };
  const options = { today: value.today ?? today };
  const ops = diffContract(value.known, value.contract, { collections: config.collections });
  const change = { ...contract, oldObject: value.known ?? null, knownFrom: value.known === undefined ? 'unknown' : (value.knownFrom ?? 'state'), ops } as const;
  return [...evaluateContractPolicies(policies, contract, options), ...evaluateChangePolicies(policies, change, options)];
}

/** One case judged: each expectation takes the first finding it matches that no earlier one took. Pure. */
export function judgeCase(file: string, line: number, value: RawCase, found: readonly Finding[]): PolicyCaseResult {
  const unexpected = [...found];
  const missing: ExpectedFinding[] = [];
  for (const expected of value.expect) {
    const index = unexpected.findIndex((finding) => matches(expected, finding));
    if (index === -1) missing.push(expected);
    else unexpected.splice(index, 1);
  }
  return { file, line, name: value.name, passed: missing.length === 0 && unexpected.length === 0, expected: value.expect, found, missing, unexpected };
}

/** Every `*.yaml` / `*.yml` under `dir`, sorted; hidden directories and node_modules are skipped. */
async function caseFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files = await Promise.all(
    entries.map(async (entry): Promise<string[]> => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name.startsWith('.') || entry.name === 'node_modules' ? [] : caseFiles(file);
      return entry.isFile() && /\.ya?ml$/.test(entry.name) ? [file] : [];
    }),
  );
  return files.flat().sort(compareText);
}

export async function runPolicyTest(request: PolicyTestRequest, effects: RunPlace & { readonly clock: { now(): number } }): Promise<PolicyTestOutcome> {
  const { config, policies, configFile, repoDir, diagnostics: configDiagnostics } = await readRepoConfig(effects, request.where);
  if (config === undefined || policies === undefined) return { kind: 'invalid-config', repoDir, configFile, diagnostics: configDiagnostics };
  if (policies.policies.length === 0) return { kind: 'bad-request', message: `${configFile} has no policies: to test` };
  const dir = path.resolve(effects.cwd, request.dir);
  let files: string[];
  try {
    files = await caseFiles(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      kind: 'bad-request',
      message: `${request.dir}: ${code === 'ENOENT' ? 'no such directory' : code === 'ENOTDIR' ? 'not a directory' : `cannot be read (${code ?? 'error'})`}`,
    };
  }
  if (files.length === 0) return { kind: 'bad-request', message: `${request.dir}: no case files (*.yaml) found` };
  const today = utcDate(effects.clock.now());
  const results: PolicyCaseResult[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const absolute of files) {
    const file = path.relative(effects.cwd, absolute).split(path.sep).join('/');
    const parsed = parseCaseFile(file, await readFile(absolute));
    diagnostics.push(...parsed.diagnostics);
    for (const { line, value } of parsed.cases) results.push(judgeCase(file, line, value, findingsOfCase(policies, config, value, today)));
  }
  return { kind: 'policy-tested', results, diagnostics };
}
