import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { runCli, type CliRun } from '../helpers/cli.ts';
import { extractInvocations, PLACEHOLDER, type Invocation } from './shell-invocations.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const GITHUB_FILE = 'examples/github-actions/contract-sync.yml';
const GITLAB_FILE = 'examples/gitlab-ci/.gitlab-ci.yml';

type Mapping = Record<string, unknown>;

interface ParsedFile {
  readonly value: Mapping;
  readonly problems: readonly string[];
}

/** Both files as CI reads them: YAML 1.2 (so `on:` stays a string key), with GitLab's `<<` merge keys. */
async function parseExample(file: string): Promise<ParsedFile> {
  const document = parseDocument(await readFile(path.join(ROOT, file), 'utf8'), { merge: true, prettyErrors: true });
  const problems = [...document.errors, ...document.warnings].map((problem) => `${file}: ${problem.message}`);
  return { value: mapping(document.toJS(), file), problems };
}

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mapping(value: unknown, where: string): Mapping {
  if (!isMapping(value)) throw new Error(`${where}: expected a mapping, got ${JSON.stringify(value)}`);
  return value;
}

/** The value at `keys` below `value`; a missing or non-mapping step names the path walked so far. */
function at(value: unknown, ...keys: string[]): unknown {
  let current = value;
  const walked: string[] = [];
  for (const key of keys) {
    current = mapping(current, walked.join('.') || 'document')[key];
    walked.push(key);
  }
  return current;
}

function list(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** GitLab `extends`: bases first, the job's own keys on top; mappings merge deeply, anything else is replaced. */
function deepMerge(base: Mapping, over: Mapping): Mapping {
  const merged: Mapping = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const previous = merged[key];
    merged[key] = isMapping(previous) && isMapping(value) ? deepMerge(previous, value) : value;
  }
  return merged;
}

function gitlabJob(file: Mapping, name: string): Mapping {
  const job = mapping(file[name], `${GITLAB_FILE}: job ${name}`);
  let resolved: Mapping = {};
  for (const base of list(job.extends)) resolved = deepMerge(resolved, gitlabJob(file, String(base)));
  const { extends: _extends, ...own } = job;
  return deepMerge(resolved, own);
}

/** GitLab nests script arrays when anchors are spliced in; the runner flattens them. */
function scriptLines(value: unknown): string[] {
  return list(value).flatMap((entry) => (Array.isArray(entry) ? scriptLines(entry) : [String(entry)]));
}

const GITLAB_SCRIPT_KEYS = ['before_script', 'script', 'after_script'] as const;

interface Script {
  /** `file: job` (and step), for test names and messages. */
  readonly where: string;
  readonly text: string;
}

function githubScripts(workflow: Mapping): Script[] {
  const scripts: Script[] = [];
  for (const [name, job] of Object.entries(mapping(workflow.jobs, `${GITHUB_FILE}: jobs`))) {
    for (const [index, step] of list(at(job, 'steps')).entries()) {
      const run = at(step, 'run');
      const label = at(step, 'name') ?? `step ${index + 1}`;
      if (typeof run === 'string') scripts.push({ where: `${GITHUB_FILE}: ${name} / ${String(label)}`, text: run });
    }
  }
  return scripts;
}

function gitlabScripts(file: Mapping): Script[] {
  const scripts: Script[] = [];
  for (const [name, job] of Object.entries(file)) {
    if (!isMapping(job)) continue;
    for (const key of GITLAB_SCRIPT_KEYS) {
      for (const text of scriptLines(job[key])) scripts.push({ where: `${GITLAB_FILE}: ${name} ${key}`, text });
    }
  }
  return scripts;
}

/** The contract-sync GitHub Action (action.yml), as the example workflow names it. */
const ACTION = /^\.\/node_modules\/contract-sync$/;
// GitHub replaces these before the action sees its inputs.
const GITHUB_EXPRESSION = /\$\{\{[\s\S]*?\}\}/g;

/**
 * The commands the example runs through the action: `command` then `args`, split on whitespace as
 * action.yml's run step does, plus what that step adds for plan (--out, --format markdown).
 */
function githubActionInvocations(workflow: Mapping): FoundInvocation[] {
  const invocations: FoundInvocation[] = [];
  for (const [name, job] of Object.entries(mapping(workflow.jobs, `${GITHUB_FILE}: jobs`))) {
    for (const [index, step] of list(at(job, 'steps')).entries()) {
      if (!ACTION.test(String(at(step, 'uses')))) continue;
      const command = String(at(step, 'with', 'command'));
      const args = String(at(step, 'with', 'args') ?? '').replace(GITHUB_EXPRESSION, PLACEHOLDER);
      const argv = [command, ...args.split(/\s+/).filter((word) => word !== '')];
      if (command === 'plan') argv.push('--out', 'plan.json', '--format', 'markdown');
      const label = at(step, 'name') ?? `step ${index + 1}`;
      invocations.push({ argv, line: `uses: ${String(at(step, 'uses'))} with ${command} ${args}`, where: `${GITHUB_FILE}: ${name} / ${String(label)}` });
    }
  }
  return invocations;
}

interface FoundInvocation extends Invocation {
  readonly where: string;
}

/**
 * A matrix or parallel job's `--shard ${{ matrix.shard }}/4` or `"$CI_NODE_INDEX/$CI_NODE_TOTAL"`:
 * CI puts numbers there, so the check runs it with 1 in place of each variable.
 */
function withShardNumbers(invocation: FoundInvocation): FoundInvocation {
  const argv = invocation.argv.map((arg, index) => (invocation.argv[index - 1] === '--shard' ? arg.replaceAll(PLACEHOLDER, '1') : arg));
  return { ...invocation, argv };
}

function invocationsOf(scripts: readonly Script[]): FoundInvocation[] {
  return scripts.flatMap((script) => extractInvocations(script.text).map((invocation) => ({ ...invocation, where: script.where })));
}

// `contract-sync` as a whole word: not `contract-sync-plan` (a comment marker) or `.contract-sync/`.
const COMMAND_WORD = /(?<![\w./-])contract-sync(?![\w/-])/g;

function mentions(scripts: readonly Script[]): number {
  return scripts.reduce((count, script) => count + [...script.text.matchAll(COMMAND_WORD)].length, 0);
}

function commands(invocations: readonly Invocation[]): Set<string | undefined> {
  return new Set(invocations.map((invocation) => invocation.argv[0]));
}

const USAGE_ERROR = /see contract-sync(?: [\w-]+)? --help|ERR_PARSE_ARGS/;

/** How the CLI said it was called wrongly, or undefined when it took the arguments. */
function usageError(run: CliRun): string | undefined {
  const line = run.stderr.split('\n').find((text) => USAGE_ERROR.test(text));
  if (line !== undefined) return line;
  if (/^Usage: contract-sync/m.test(run.stdout)) return 'printed the help instead of running';
  return undefined;
}

const github = await parseExample(GITHUB_FILE);
const gitlab = await parseExample(GITLAB_FILE);
const githubActionSteps = githubActionInvocations(github.value);
const githubInvocations = [...invocationsOf(githubScripts(github.value)), ...githubActionSteps];
const gitlabInvocations = invocationsOf(gitlabScripts(gitlab.value));
const allInvocations = [...githubInvocations, ...gitlabInvocations].map(withShardNumbers);

describe(GITHUB_FILE, () => {
  const workflow = github.value;

  it('parses without errors or warnings', () => {
    expect(github.problems).toEqual([]);
  });

  it('runs on pull requests, on pushes to main and on a schedule', () => {
    const on = mapping(workflow.on, `${GITHUB_FILE}: on`);

    expect(Object.keys(on)).toEqual(expect.arrayContaining(['pull_request', 'push', 'schedule']));
    expect(at(on, 'push', 'branches')).toEqual(['main']);
    expect(list(on.schedule)).toContainEqual({ cron: expect.stringMatching(/^\S+( \S+){4}$/) });
  });

  it('gives apply and drift one concurrency group that never cancels a run in progress', () => {
    const apply = at(workflow, 'jobs', 'apply', 'concurrency');
    const drift = at(workflow, 'jobs', 'drift', 'concurrency');

    expect(at(apply, 'group')).toEqual(expect.any(String));
    expect(at(drift, 'group')).toBe(at(apply, 'group'));
    expect(at(apply, 'cancel-in-progress')).toBe(false);
    expect(at(drift, 'cancel-in-progress')).toBe(false);
  });

  it.each(['plan', 'apply', 'drift'])('%s job checks out the full history (--base and incremental apply need it)', (job) => {
    const steps = list(at(workflow, 'jobs', job, 'steps'));

    const checkout = steps.find((step) => String(at(step, 'uses')).startsWith('actions/checkout@'));

    expect(at(checkout, 'with', 'fetch-depth')).toBe(0);
  });

  it('recommends the PostgreSQL state store with the URL from a secret, and keeps the file store as the default', async () => {
    const text = await readFile(path.join(ROOT, GITHUB_FILE), 'utf8');

    expect(text).toContain('state: { backend: postgres, url: { env: CONTRACT_SYNC_DATABASE_URL } }');
    expect(at(workflow, 'jobs', 'apply', 'env', 'CONTRACT_SYNC_DATABASE_URL')).toBe('${{ secrets.CONTRACT_SYNC_DATABASE_URL }}');
    expect(at(workflow, 'jobs', 'apply', 'if')).toContain("vars.CONTRACT_SYNC_STATE != 'postgres'");
  });

  it('applies with a matrix of workers sharing one run (--shard auto), each named, when the state is in PostgreSQL', () => {
    const job = at(workflow, 'jobs', 'apply-sharded');
    const workers = at(job, 'strategy', 'matrix', 'worker') as number[];
    const step = list(at(job, 'steps')).find((candidate) => ACTION.test(String(at(candidate, 'uses'))));

    expect(at(job, 'if')).toContain("vars.CONTRACT_SYNC_STATE == 'postgres'");
    expect(workers).toEqual([1, 2, 3, 4]);
    expect(String(at(step, 'with', 'args'))).toContain('--shard auto');
    expect(at(job, 'env', 'CONTRACT_SYNC_WORKER')).toBe('${{ matrix.worker }}');
    expect(at(job, 'env', 'CONTRACT_SYNC_DATABASE_URL')).toBe('${{ secrets.CONTRACT_SYNC_DATABASE_URL }}');
    expect(list(at(job, 'steps')).filter((candidate) => String(at(candidate, 'uses')).startsWith('actions/cache'))).toEqual([]);
  });

  it('lets the pull-request job comment, and runs it on pull requests only', () => {
    const plan = at(workflow, 'jobs', 'plan');

    expect(at(plan, 'permissions', 'pull-requests')).toBe('write');
    expect(at(plan, 'if')).toBe("github.event_name == 'pull_request'");
  });
});

describe(GITLAB_FILE, () => {
  const file = gitlab.value;

  it('parses without errors or warnings', () => {
    expect(gitlab.problems).toEqual([]);
  });

  it('clones the full history (--base and incremental apply need it)', () => {
    expect(at(file, 'variables', 'GIT_DEPTH')).toBe('0');
  });

  it('puts every job that changes the service in one resource_group and never interrupts it', () => {
    const jobs = ['apply', 'apply:reviewed', 'drift'].map((name) => gitlabJob(file, name));

    const groups = new Set(jobs.map((job) => job.resource_group));

    expect([...groups]).toEqual([expect.stringMatching(/^contract-sync-/)]);
    for (const job of jobs) expect(job.interruptible).toBe(false);
  });

  it('recommends the PostgreSQL state store with the URL from a CI/CD variable, and keeps the file store as the default', async () => {
    const text = await readFile(path.join(ROOT, GITLAB_FILE), 'utf8');

    expect(text).toContain('state: { backend: postgres, url: { env: CONTRACT_SYNC_DATABASE_URL } }');
    expect(at(file, 'variables', 'CONTRACT_SYNC_STATE')).toBe('file');
  });

  it('applies with parallel: N workers sharing one run (--shard auto), each named by CI_NODE_INDEX, when the state is in PostgreSQL', () => {
    const job = gitlabJob(file, 'apply:sharded');
    const [apply] = extractInvocations(scriptLines(job.script).join('\n'));

    expect(job.parallel).toBe(4);
    expect(list(job.rules)).toEqual([expect.objectContaining({ if: expect.stringContaining('$CONTRACT_SYNC_STATE == "postgres"') })]);
    expect(apply?.line).toContain('--shard auto');
    expect(apply?.line).toContain('CONTRACT_SYNC_WORKER="$CI_NODE_INDEX"');
    expect(job.interruptible).toBe(false);
  });

  it('runs drift from a pipeline schedule', () => {
    const rules = list(gitlabJob(file, 'drift').rules);

    expect(rules).toContainEqual(expect.objectContaining({ if: '$CI_PIPELINE_SOURCE == "schedule"' }));
  });

  it('has a manual job that applies the saved plan made by the job it needs', () => {
    const manual = Object.keys(file)
      .filter((name) => !name.startsWith('.') && isMapping(file[name]))
      .map((name) => ({ name, job: gitlabJob(file, name) }))
      .filter(({ job }) => job.when === 'manual' || list(job.rules).some((rule) => at(rule, 'when') === 'manual'));
    const [reviewed] = manual;
    const applies = extractInvocations(scriptLines(reviewed?.job.script).join('\n'));
    const needed = list(reviewed?.job.needs).map((name) => gitlabJob(file, String(name)));

    expect(manual.map(({ name }) => name)).toEqual(['apply:reviewed']);
    expect(applies.map((invocation) => invocation.argv.slice(0, 2))).toEqual([['apply', 'plan.json']]);
    expect(needed.flatMap((job) => list(at(job, 'artifacts', 'paths')))).toContain('plan.json');
  });
});

describe('contract-sync commands in the CI examples', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-ci-examples-'));
  });

  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('finds every command the scripts run, for each step of the flow', () => {
    const githubCount = mentions(githubScripts(github.value)) + githubActionSteps.length;
    const gitlabCount = mentions(gitlabScripts(gitlab.value));

    expect(githubInvocations).toHaveLength(githubCount);
    expect(gitlabInvocations).toHaveLength(gitlabCount);
    expect([...commands(githubInvocations)].sort()).toEqual(['apply', 'drift', 'plan', 'validate']);
    expect([...commands(gitlabInvocations)].sort()).toEqual(['apply', 'drift', 'plan', 'validate']);
  });

  it.each(allInvocations.map((invocation) => [invocation.where, invocation.argv.join(' '), invocation] as const))(
    '%s: contract-sync %s takes its arguments',
    async (_where, _command, invocation) => {
      const run = await runCli(invocation.argv, dir);

      expect(usageError(run), `${invocation.line}\n${run.stderr}`).toBeUndefined();
    },
  );

  // The check above must be able to fail: the same commands, each broken one way.
  it.each([
    ['an unknown flag', (argv: readonly string[]) => [...argv, '--no-such-flag']],
    ['a flag that lost its value', (argv: readonly string[]) => [...argv, '--format']],
    ['a misspelt command', (argv: readonly string[]) => [`${argv[0] ?? ''}x`, ...argv.slice(1)]],
  ])('reports a usage error for each command given %s', async (_mistake, breakArgv) => {
    const errors: (string | undefined)[] = [];

    for (const invocation of allInvocations) errors.push(usageError(await runCli(breakArgv(invocation.argv), dir)));

    expect(errors.filter((error) => error === undefined)).toEqual([]);
  });
});

describe('extractInvocations', () => {
  it.each([
    ['a plain command', 'npx contract-sync validate', [['validate']]],
    ['no npx', 'contract-sync plan --ref HEAD', [['plan', '--ref', 'HEAD']]],
    ['line continuations', 'npx contract-sync plan \\\n  --ref HEAD \\\n  --format markdown', [['plan', '--ref', 'HEAD', '--format', 'markdown']]],
    ['quotes', `npx contract-sync plan --base "origin/main" --out 'my plan.json'`, [['plan', '--base', 'origin/main', '--out', 'my plan.json']]],
    [
      'shell variables',
      'npx contract-sync plan --base "origin/$BASE_REF" --tenant ${TENANT:-acme} --ref $(git rev-parse HEAD)',
      [['plan', '--base', `origin/${PLACEHOLDER}`, '--tenant', PLACEHOLDER, '--ref', PLACEHOLDER]],
    ],
    ['GitHub expressions', 'npx contract-sync plan --base ${{ github.base_ref }}', [['plan', '--base', PLACEHOLDER]]],
    ['redirections and || true', 'npx contract-sync plan --format markdown > plan.md 2>&1 || true', [['plan', '--format', 'markdown']]],
    ['a redirection before the flags', 'npx contract-sync plan >plan.md --format markdown', [['plan', '--format', 'markdown']]],
    ['a pipe to tee', 'npx contract-sync drift | tee drift.txt', [['drift']]],
    ['commands after && and ;', 'cd repo && npx contract-sync validate; npx contract-sync plan', [['validate'], ['plan']]],
    ['a comment', 'npx contract-sync validate # --format github', [['validate']]],
    [
      'a bash array with a conditional append',
      'args=(drift --format markdown)\nif [ "$FIX" = "true" ]; then args+=(--fix); fi\nnpx contract-sync "${args[@]}"',
      [['drift', '--format', 'markdown', '--fix']],
    ],
    ['a here-document body', "node <<'EOF'\nconst x = 'contract-sync plan';\ncontract-sync apply\nEOF\ncontract-sync validate", [['validate']]],
    ['the name inside a quoted string', `echo "run contract-sync plan" '<!-- contract-sync-plan -->'`, []],
  ])('handles %s', (_case, script, expected) => {
    const invocations = extractInvocations(script);

    expect(invocations.map((invocation) => invocation.argv)).toEqual(expected);
  });
});
