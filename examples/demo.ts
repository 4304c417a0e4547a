/**
 * `npm run demo`: contract-sync on its built-in defaults, against the local emulator.
 *
 * Everything runs for real: the emulator (OpenID Connect provider + CMS API) starts in-process,
 * the demo repository is copied into a temporary git repository (with a policy rule that warns on
 * one contract, shown by every command below), then: validate, the plan a pull
 * request would show (`--ref HEAD --base main`), apply after the merge, an incremental apply of a
 * second merge, an out-of-band change through the emulator's admin endpoint, `drift` (which
 * finds it) and `drift --fix` (which corrects it). Nothing is left running.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { main } from '../engine/cli/main.ts';
import type { CliIo } from '../engine/cli/io.ts';
import { readSeedFile, startEmulator } from '../emulator/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const exec = promisify(execFile);

const io: CliIo = {
  stdout: { write: (text: string) => process.stdout.write(indent(text)), isTTY: false },
  stderr: { write: (text: string) => process.stderr.write(indent(text)) },
  // Throwaway secrets from the emulator's example seed; never real ones.
  // Warnings and errors only, as text lines, as at a terminal: the info lines would drown the demo's output.
  env: {
    ...process.env,
    ACME_CLIENT_SECRET: 'dev-secret-acme',
    GLOBEX_CLIENT_SECRET: 'dev-secret-globex',
    CONTRACT_SYNC_LOG_LEVEL: 'warn',
    CONTRACT_SYNC_LOG_FORMAT: 'text',
  },
  cwd: ROOT,
};

/**
 * A policy rule (docs/policies.md) the demo adds to the repository's config: a warning, shown by
 * validate, the plan and its comment, apply and drift, that fails nothing (one contract, G-100,
 * has a notice period over 90 days). The DORA pack in examples/policies/ has rules that deny.
 */
const WARNING_RULE = `policies:
  - name: long-supplier-notice
    on: contract
    matchConditions:
      - name: has-notice-days
        expression: has(object.SupplierNoticePeriod) && has(object.SupplierNoticePeriod.Days)
    validations:
      - expression: object.SupplierNoticePeriod.Days <= 90
        messageExpression: '"a supplier notice period of " + string(object.SupplierNoticePeriod.Days) + " days: put the renewal in the calendar"'
    action: warn
`;

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, '    ');
}

function step(title: string): void {
  console.log(`\n==> ${title}`);
}

async function git(repo: string, ...args: string[]): Promise<void> {
  await exec('git', ['-c', 'user.name=contract-sync demo', '-c', 'user.email=demo@example.invalid', ...args], { cwd: repo });
}

const started = performance.now();
const seed = await readSeedFile(path.join(ROOT, 'emulator/seed.example.yaml'));
const emulator = await startEmulator(seed);
const repo = await mkdtemp(path.join(tmpdir(), 'contract-sync-demo-'));
const results: string[] = [];
try {
  step(`Emulator ready: ${JSON.stringify(emulator.urls)}`);

  step('A demo repository in a temporary git repository, pointed at the emulator, with a policy rule that warns (long-supplier-notice)');
  await cp(path.join(ROOT, 'examples/demo-repo'), repo, { recursive: true });
  const configFile = path.join(repo, 'contract-sync.yaml');
  const config = await readFile(configFile, 'utf8');
  await writeFile(configFile, `${config.replaceAll('http://127.0.0.1:8080', emulator.urls.baseUrl)}${WARNING_RULE}`);
  await git(repo, 'init', '-q', '-b', 'main');
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', 'Desired state of the demo contracts');
  console.log(indent(`${repo} (contracts/acme/*.yaml, contracts/globex/*.yaml)`));

  step('contract-sync validate');
  const validate = await main(['validate', '--repo', repo], io);
  results.push(`validate ${validate}`);

  step('A pull request: branch renew-cleaning extends contract 4711 by a year and adds a supplier');
  await git(repo, 'checkout', '-q', '-b', 'renew-cleaning');
  const facilities = path.join(repo, 'contracts/acme/facilities.yaml');
  const before = await readFile(facilities, 'utf8');
  await writeFile(
    facilities,
    before
      .replace('ValidTo: 2027-12-31T23:59:59Z', 'ValidTo: 2028-12-31T23:59:59Z')
      .replace('      - { Id: 12, RelationType: Supplier }\n', '      - { Id: 12, RelationType: Supplier }\n      - { Id: 44, RelationType: Supplier }\n'),
  );
  await git(repo, 'commit', '-q', '-am', 'Renew facility cleaning for 2028');

  step(
    'contract-sync plan --ref HEAD --base main --refresh --format markdown --detailed-exitcode   (the pull-request comment; --refresh reads live state, without it no credentials are needed)',
  );
  const plan = await main(['plan', '--repo', repo, '--ref', 'HEAD', '--base', 'main', '--refresh', '--format', 'markdown', '--detailed-exitcode'], io);
  results.push(`plan ${plan} (2 = changes)`);

  step('Merged: contract-sync apply   (on main: reads each contract live, PATCHes the changed ones)');
  await git(repo, 'checkout', '-q', 'main');
  await git(repo, 'merge', '-q', '--no-ff', '-m', 'Merge renew-cleaning', 'renew-cleaning');
  const apply = await main(['apply', '--repo', repo], io);
  results.push(`apply ${apply}`);

  step('A second merge renames contract 5001: contract-sync apply plans only the changed file (incremental)');
  const it = path.join(repo, 'contracts/acme/it.yaml');
  await writeFile(it, (await readFile(it, 'utf8')).replace(/Name: .*$/m, 'Name: Cloud hosting (EU region)'));
  await git(repo, 'commit', '-q', '-am', 'Rename the cloud hosting contract');
  const incremental = await main(['apply', '--repo', repo], io);
  results.push(`incremental apply ${incremental}`);

  step('Someone changes contract 4711 outside git (emulator admin endpoint: PUT, out of band)');
  const live = (await (await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`)).json()) as Record<string, unknown>;
  const drifted = { ...live, Name: 'Cleaning (edited by hand)' };
  await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(drifted),
  });
  console.log(indent(`Name is now ${JSON.stringify(drifted.Name)}`));

  step('contract-sync drift --detailed-exitcode   (the scheduled job: reads every managed contract live)');
  const drift = await main(['drift', '--repo', repo, '--detailed-exitcode'], io);
  results.push(`drift ${drift} (2 = drift found)`);

  step('contract-sync drift --fix --detailed-exitcode   (corrects it through the same queue)');
  const fix = await main(['drift', '--repo', repo, '--fix', '--detailed-exitcode'], io);
  const after = (await (await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`)).json()) as Record<string, unknown>;
  console.log(indent(`Live Name of 4711 is ${JSON.stringify(after.Name)} again`));
  results.push(`drift --fix ${fix}`);

  step('contract-sync drift --detailed-exitcode   (nothing left)');
  const clean = await main(['drift', '--repo', repo, '--detailed-exitcode'], io);
  results.push(`drift ${clean}`);

  const ok =
    validate === 0 && plan === 2 && apply === 0 && incremental === 0 && drift === 2 && fix === 0 && clean === 0 && after.Name === 'Facility cleaning 2027';
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`\n${ok ? 'DEMO OK' : 'DEMO FAILED'}: exit codes ${results.join(', ')}; ${seconds} s.`);
  process.exitCode = ok ? 0 : 1;
} finally {
  await emulator.close();
  await rm(repo, { recursive: true, force: true });
}
