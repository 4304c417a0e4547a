/**
 * `npm run demo`: contract-sync on its built-in defaults, against the local emulator.
 *
 * Everything runs for real: the emulator (OpenID Connect provider + CMS API) starts in-process,
 * the demo repository is copied into a temporary git repository (with a policy rule that warns on
 * one contract, shown by every command below), then: validate, the plan a pull
 * request would show (`--ref HEAD --base main`), apply after the merge, an incremental apply of a
 * second merge, an out-of-band change through the emulator's admin endpoint by a named user,
 * `drift` (which finds it, says who made it from the service's audit events, and tells a local
 * webhook receiver once: examples/notify/receiver.mjs, checking the signature), the same `drift`
 * again (nothing told) and `drift --fix` (which corrects it and tells the resolution). Nothing is
 * left running.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { main } from '../engine/cli/main.ts';
import type { CliIo } from '../engine/cli/io.ts';
import { readSeedFile, startEmulator } from '../emulator/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const exec = promisify(execFile);

// A throwaway key the demo's webhook channel signs with and its receiver checks; never a real one.
const HOOK_SECRET = 'throwaway-demo-hook-secret';

const io: CliIo = {
  stdout: { write: (text: string) => process.stdout.write(indent(text)), isTTY: false },
  stderr: { write: (text: string) => process.stderr.write(indent(text)) },
  // Throwaway secrets from the emulator's example seed; never real ones.
  // Warnings and errors only, as text lines, as at a terminal: the info lines would drown the demo's output.
  env: {
    ...process.env,
    ACME_CLIENT_SECRET: 'dev-secret-acme',
    GLOBEX_CLIENT_SECRET: 'dev-secret-globex',
    HOOK_SECRET,
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

/** One line of what the receiver accepted (examples/notify/receiver.mjs prints them). */
interface Told {
  readonly event: string;
  readonly tenant: string;
  readonly summary: string;
  readonly contracts: readonly {
    readonly id: string;
    readonly fields: readonly { readonly field: string; readonly changedBy?: { readonly actor: string } }[];
  }[];
}

/** The webhook receiver of examples/notify, on a free loopback port: its URL and what it accepted so far. */
async function startReceiver(): Promise<{ url: string; told: Told[]; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'examples/notify/receiver.mjs')], {
    env: { PATH: process.env.PATH ?? '', HOOK_SECRET, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const told: Told[] = [];
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the webhook receiver ended (${code}) before it listened`)));
    lines.on('line', (line) => {
      const parsed = JSON.parse(line) as { listening?: string } & Told;
      if (parsed.listening !== undefined) resolve(parsed.listening);
      else told.push(parsed);
    });
  });
  return {
    url,
    told,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Waits a moment for the receiver's lines (its stdout is a pipe), then shows what arrived since `from`. */
async function showTold(told: readonly Told[], from: number): Promise<Told[]> {
  await new Promise((resolve) => setTimeout(resolve, 200));
  const fresh = told.slice(from);
  if (fresh.length === 0) console.log(indent('webhook receiver: nothing arrived'));
  for (const entry of fresh)
    console.log(indent(`webhook receiver: ${JSON.stringify({ event: entry.event, summary: entry.summary, contracts: entry.contracts })}`));
  return fresh;
}

const started = performance.now();
const seed = await readSeedFile(path.join(ROOT, 'emulator/seed.example.yaml'));
const emulator = await startEmulator(seed);
const receiver = await startReceiver();
const repo = await mkdtemp(path.join(tmpdir(), 'contract-sync-demo-'));
const results: string[] = [];
try {
  step(`Emulator ready: ${JSON.stringify(emulator.urls)}`);

  step(`Webhook receiver ready (examples/notify/receiver.mjs): ${receiver.url}`);

  step(
    'A demo repository in a temporary git repository, pointed at the emulator, with audit attribution, a webhook channel and a policy rule that warns (long-supplier-notice)',
  );
  await cp(path.join(ROOT, 'examples/demo-repo'), repo, { recursive: true });
  const configFile = path.join(repo, 'contract-sync.yaml');
  const config = (await readFile(configFile, 'utf8'))
    .replaceAll('http://127.0.0.1:8080', emulator.urls.baseUrl)
    // As examples/notify/contract-sync.yaml configures them: the emulator's audit events, and one signed webhook.
    .replace(
      /^( {2}read: .*)$/m,
      '$1\n  audit: { path: "/audit/events?contractId={id}", pointer: /events, fields: { actor: /actor, time: /time, contractFields: /fields, id: /id } }',
    );
  await writeFile(
    configFile,
    `${config}notify:\n  - { name: audit-sink, kind: webhook, url: "${receiver.url}/contract-sync", secret: { env: HOOK_SECRET }, on: [drift, drift-resolved, apply-failed, policy-denied] }\n${WARNING_RULE}`,
  );
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

  step("jane@example.com changes contract 4711 in the service's UI (emulator admin endpoint: PUT, out of band, recorded as an audit event)");
  const live = (await (await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`)).json()) as Record<string, unknown>;
  const drifted = { ...live, Name: 'Cleaning (edited by hand)' };
  await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', 'X-Actor': 'jane@example.com' },
    body: JSON.stringify(drifted),
  });
  console.log(indent(`Name is now ${JSON.stringify(drifted.Name)}`));

  step('contract-sync drift --detailed-exitcode   (the scheduled job: reads every managed contract live, says who changed it, tells the webhook)');
  const drift = await main(['drift', '--repo', repo, '--detailed-exitcode'], io);
  results.push(`drift ${drift} (2 = drift found)`);
  const toldDrift = await showTold(receiver.told, 0);

  step('contract-sync drift --detailed-exitcode   (the next scheduled run: the same drift, nothing told again)');
  const repeat = await main(['drift', '--repo', repo, '--detailed-exitcode'], io);
  results.push(`drift ${repeat}`);
  const toldRepeat = await showTold(receiver.told, toldDrift.length);

  step('contract-sync drift --fix --detailed-exitcode   (corrects it through the same queue)');
  const fix = await main(['drift', '--repo', repo, '--fix', '--detailed-exitcode'], io);
  const after = (await (await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`)).json()) as Record<string, unknown>;
  console.log(indent(`Live Name of 4711 is ${JSON.stringify(after.Name)} again`));
  results.push(`drift --fix ${fix}`);
  const toldFix = await showTold(receiver.told, toldDrift.length + toldRepeat.length);

  step('contract-sync drift --detailed-exitcode   (nothing left)');
  const clean = await main(['drift', '--repo', repo, '--detailed-exitcode'], io);
  results.push(`drift ${clean}`);

  const attributed =
    toldDrift.length === 1 && toldDrift[0]!.event === 'drift' && toldDrift[0]!.contracts[0]?.fields[0]?.changedBy?.actor === 'jane@example.com';
  const notified = attributed && toldRepeat.length === 0 && toldFix.map((entry) => entry.event).join() === 'drift-resolved';
  console.log(
    indent(
      `\nNotifications: ${notified ? 'the drift told once, attributed to jane@example.com; its repeat told nothing; its resolution told once' : 'NOT as expected'}`,
    ),
  );
  const ok =
    validate === 0 &&
    plan === 2 &&
    apply === 0 &&
    incremental === 0 &&
    drift === 2 &&
    repeat === 2 &&
    fix === 0 &&
    clean === 0 &&
    after.Name === 'Facility cleaning 2027' &&
    notified;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`\n${ok ? 'DEMO OK' : 'DEMO FAILED'}: exit codes ${results.join(', ')}; ${seconds} s.`);
  process.exitCode = ok ? 0 : 1;
} finally {
  await receiver.stop();
  await emulator.close();
  await rm(repo, { recursive: true, force: true });
}
