/**
 * `npm run demo`: contract-sync on its built-in defaults, against the local emulator.
 *
 * What exists today runs for real: the emulator (OpenID Connect provider + CMS API) starts
 * in-process, the demo repository is copied into a temporary git repository, then `validate` and a
 * pull-request `plan` run on it. Apply and drift correction are not built yet; the demo says so in
 * its verdict instead of pretending.
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
  env: { ...process.env, ACME_CLIENT_SECRET: 'dev-secret-acme', GLOBEX_CLIENT_SECRET: 'dev-secret-globex' },
  cwd: ROOT,
};

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

  step('A demo repository in a temporary git repository, pointed at the emulator');
  await cp(path.join(ROOT, 'examples/demo-repo'), repo, { recursive: true });
  const configFile = path.join(repo, 'contract-sync.yaml');
  const config = await readFile(configFile, 'utf8');
  await writeFile(configFile, config.replaceAll('http://127.0.0.1:8080', emulator.urls.baseUrl));
  await git(repo, 'init', '-q', '-b', 'main');
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', 'Desired state of the demo contracts');
  console.log(indent(`${repo} (contracts/acme/*.yaml, contracts/globex/*.yaml)\n`));

  step('contract-sync validate');
  const validate = await main(['validate', '--repo', repo], io);
  results.push(`validate exit ${validate}`);

  step('Live contract 4711 of tenant acme, before (emulator admin endpoint)');
  const live = await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`);
  console.log(indent(`${JSON.stringify(await live.json())}\n`));

  step('contract-sync plan --format markdown --detailed-exitcode   (what a pull request shows)');
  const plan = await main(['plan', '--repo', repo, '--format', 'markdown', '--detailed-exitcode'], io);
  results.push(`plan exit ${plan} (2 = changes)`);

  const ok = validate === 0 && plan === 2;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `\n${ok ? 'DEMO OK' : 'DEMO FAILED'}: ${results.join(', ')} in ${seconds} s. ` +
      'Not built yet: apply, drift detection and drift --fix (issues "Apply" and "GitOps runs").',
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  await emulator.close();
  await rm(repo, { recursive: true, force: true });
}
