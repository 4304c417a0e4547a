/**
 * Issue 41, item 4: hostile inputs are refused with one clear line naming where, exit 1, nothing
 * sent: contracts past their key and item bounds, FIFOs and devices where a file is read, invisible
 * and bidi characters in ContractIds, CONTRACT_SYNC_* variables, control characters in the config.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, symlink } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveSecret } from '../../engine/config/secrets.ts';
import { CONTRACT_BOUNDS } from '../../engine/desired/contract-bounds.ts';
import { READ_LIMITS, readTextBounded } from '../../engine/io/bounded-read.ts';
import { parseDesiredFile, parseDesiredFileExactly } from '../../engine/desired/parse-file.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml, writeTree } from '../helpers/files.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function repoWith(files: Record<string, string>, config = configYaml(['acme'])): Promise<string> {
  const { dir, cleanup } = await writeTree({ 'contract-sync.yaml': config, ...files });
  cleanups.push(cleanup);
  await mkdir(path.join(dir, '.git'));
  return dir;
}

function manyKeys(count: number): string {
  let text = 'tenant: acme\ncontracts:\n  "1":\n    Name: fine\n  "2":\n';
  for (let index = 0; index < count; index++) text += `    k${index}: 1\n`;
  return text;
}

function manyMembers(count: number): string {
  let text = 'tenant: acme\ncontracts:\n  "7":\n    Company:\n';
  for (let index = 0; index < count; index++) text += `      - { Id: ${index}, RelationType: Supplier }\n`;
  return text;
}

describe('keys and items per contract are bounded', () => {
  it.each([
    [
      'a contract with one key past the bound',
      manyKeys(CONTRACT_BOUNDS.keys + 1),
      5,
      'contracts.2',
      '1,001 keys; a map in a contract holds at most 1,000: the file is read no further',
    ],
    [
      'a collection with one member past the bound',
      manyMembers(CONTRACT_BOUNDS.items + 1),
      3,
      'Company',
      '10,001 items; a list in a contract holds at most 10,000: the file is read no further',
    ],
  ])('%s: one error at the contract, by the fast and the exact reader alike', (_case, content, line, field, message) => {
    const file = { path: 'contracts/acme/big.yaml', content };

    const fast = parseDesiredFile(file);
    const exact = parseDesiredFileExactly(file);

    expect(fast.diagnostics).toEqual([expect.objectContaining({ code: 'contract-too-large', file: file.path, line, column: 3, field, message })]);
    expect(fast.contractSet).toBeUndefined();
    expect(exact.diagnostics).toEqual(fast.diagnostics);
  });

  it('at the bounds exactly, the file is read as always', () => {
    const keys = parseDesiredFile({ path: 'contracts/acme/a.yaml', content: manyKeys(CONTRACT_BOUNDS.keys) });
    const members = parseDesiredFile({ path: 'contracts/acme/b.yaml', content: manyMembers(CONTRACT_BOUNDS.items) });

    expect(keys.diagnostics).toHaveLength(CONTRACT_BOUNDS.keys);
    expect(keys.diagnostics[0]!.message).toBe('unknown field "k0"');
    expect(members.diagnostics).toEqual([]);
    expect(members.contractSet?.contracts[0]!.fields.Company).toHaveLength(CONTRACT_BOUNDS.items);
  });

  it('validate on a contract of a million keys: one line naming file:line, exit 1, in seconds', async () => {
    const dir = await repoWith({ 'contracts/acme/huge.yaml': manyKeys(1_000_000) });
    const started = Date.now();

    const run = await runCli(['validate'], dir);

    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain(
      'contracts/acme/huge.yaml:5:3  contracts.2  1,000,000 keys; a map in a contract holds at most 1,000: the file is read no further',
    );
    expect(run.stdout + run.stderr).not.toContain('internal error');
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 90_000);
});

/** Invisible and bidirectional characters, as engine/text/text-escape.ts makes them visible. */
const INVISIBLE = [
  '\u00ad',
  '\u061c',
  '\u180e',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u2029',
  '\u202a',
  '\u202e',
  '\u2060',
  '\u2066',
  '\u2069',
  '\ufeff',
  '\ufffa',
];

describe('invisible and bidirectional characters in ContractIds are refused, as U+FEFF at the edges was', () => {
  it.each(INVISIBLE.map((char) => [`U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`, char]))('%s inside an id', (_name, char) => {
    const id = `47${char}11`;

    const parsed = parseDesiredFile({
      path: 'contracts/acme/a.yaml',
      content: `tenant: acme\ncontracts:\n  ${JSON.stringify(id)}:\n    Name: x\n  "4712":\n    Name: y\n`,
    });

    expect(parsed.diagnostics).toEqual([
      expect.objectContaining({
        line: 3,
        column: 3,
        message: expect.stringContaining(`a ContractId is non-empty, at most 256 characters, without control, invisible or bidirectional characters`),
      }),
    ]);
    expect(parsed.contractSet?.contracts.map((contract) => contract.id)).toEqual(['4712']);
  });

  it('apply refuses the run before anything is sent: no request reaches the service or the identity provider', async () => {
    const requests: string[] = [];
    const server = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = configYaml(['acme']).replace('https://cms.example.com', url).replace('https://login.example.com', url);
    const dir = await repoWith({ 'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "47\u200b11":\n    Name: x\n  "4712":\n    Name: y\n' }, config);

    const run = await runCli(['apply', '--auto-approve'], dir, { ACME_SECRET: 'throwaway' });

    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain('contracts/acme/a.yaml:3:3');
    expect(run.stdout + run.stderr).toContain('invalid name "47\\u200b11"');
    expect(requests).toEqual([]);
  });
});

describe('a FIFO or a device where a file is read is refused before any byte is read', () => {
  async function withFifo(name: string): Promise<{ dir: string; fifo: string }> {
    const dir = await repoWith({});
    const fifo = path.join(dir, name);
    execFileSync('mkfifo', [fifo]);
    return { dir, fifo };
  }

  it('validate --config FIFO: one line naming the file, exit 1, no wait for a writer', async () => {
    const { dir } = await withFifo('pipe.yaml');

    const run = await runCli(['validate', '--config', 'pipe.yaml'], dir);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('pipe.yaml:1:1  -  cannot read the config file: it is a FIFO (named pipe), not a regular file');
  }, 20_000);

  it('apply PLAN (a FIFO): refused, nothing applied', async () => {
    const { dir } = await withFifo('plan.json');

    const run = await runCli(['apply', 'plan.json'], dir, { ACME_SECRET: 'throwaway' });

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('plan.json: cannot read the plan file: it is a FIFO (named pipe), not a regular file; nothing applied');
  }, 20_000);

  it('show PLAN (a FIFO or a device)', async () => {
    const { dir } = await withFifo('plan.json');

    const fifo = await runCli(['show', 'plan.json'], dir);
    const device = await runCli(['show', '/dev/zero'], dir);

    expect(fifo).toMatchObject({ code: 1, stderr: 'contract-sync show: plan.json: a FIFO (named pipe), not a regular file\n' });
    expect(device).toMatchObject({ code: 1, stderr: 'contract-sync show: /dev/zero: a character device, not a regular file\n' });
  }, 20_000);

  it('a secret { file } that is a FIFO', async () => {
    const { fifo } = await withFifo('secret');

    const resolving = resolveSecret({ file: fifo }, { env: {}, readFile: (file) => readTextBounded(file, READ_LIMITS.secret) });

    await expect(resolving).rejects.toThrow(`secret file ${fifo} is a FIFO (named pipe), not a regular file`);
  });

  it('a directory is still a directory (show says so, as before)', async () => {
    const dir = await repoWith({ 'plans/.keep': '' });

    const run = await runCli(['show', 'plans'], dir);

    expect(run.stderr).toBe('contract-sync show: plans: a directory, not a plan file\n');
  });
});

describe('CONTRACT_SYNC_* variables are checked as strictly as their flags, and errors name the variable', () => {
  it.each<[string, Record<string, string>, string]>([
    [
      'an empty tenant list',
      { CONTRACT_SYNC_TENANT: ',,,' },
      'CONTRACT_SYNC_TENANT ",,," holds an empty item; name each value once, separated by commas (e.g. acme,globex)',
    ],
    [
      'an empty tenant in a list',
      { CONTRACT_SYNC_TENANT: 'acme,,acme' },
      'CONTRACT_SYNC_TENANT "acme,,acme" holds an empty item; name each value once, separated by commas (e.g. acme,globex)',
    ],
    ['an unknown tenant', { CONTRACT_SYNC_TENANT: 'nope' }, 'CONTRACT_SYNC_TENANT "nope" is not configured (known: acme)'],
    ['a negative lock timeout', { CONTRACT_SYNC_LOCK_TIMEOUT: '-1' }, 'CONTRACT_SYNC_LOCK_TIMEOUT must be a number of seconds; got "-1"'],
    ['a lock timeout that is no number', { CONTRACT_SYNC_LOCK_TIMEOUT: 'soon' }, 'CONTRACT_SYNC_LOCK_TIMEOUT must be a number of seconds; got "soon"'],
    ['a shard out of range', { CONTRACT_SYNC_SHARD: '9/2' }, 'CONTRACT_SYNC_SHARD "9/2": the shard must be between 1 and 2'],
    ['an unknown log level', { CONTRACT_SYNC_LOG_LEVEL: 'bogus' }, 'CONTRACT_SYNC_LOG_LEVEL must be one of debug, info, warn, error, silent; got "bogus"'],
    ['an unknown log format', { CONTRACT_SYNC_LOG_FORMAT: 'xml' }, 'CONTRACT_SYNC_LOG_FORMAT must be one of json, text; got "xml"'],
    [
      'an escape in a worker name',
      { CONTRACT_SYNC_WORKER: 'w\u001b[31m' },
      'CONTRACT_SYNC_WORKER "w\\e[31m" holds a control, invisible or bidirectional character',
    ],
    [
      'a bidi override in a run name',
      { CONTRACT_SYNC_RUN: 'run\u202e1' },
      'CONTRACT_SYNC_RUN "run\\u202e1" holds a control, invisible or bidirectional character',
    ],
  ])('%s: refused with one line, exit 1, nothing sent', async (_case, env, message) => {
    const dir = await repoWith({ 'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1":\n    Name: x\n' });

    const run = await runCli(['apply', '--auto-approve'], dir, { ACME_SECRET: 'throwaway', ...env });

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`contract-sync apply: ${message}; see contract-sync apply --help\n`);
    expect(run.stdout).toBe('');
  });

  it('the flag given on the command line still wins, and a blank variable is unset', async () => {
    const dir = await repoWith({ 'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1":\n    Name: x\n' });

    const flagWins = await runCli(['plan', '--tenant', 'acme', '--log-format', 'text'], dir, { CONTRACT_SYNC_TENANT: ',,,', CONTRACT_SYNC_LOG_FORMAT: 'xml' });
    const blank = await runCli(['plan'], dir, { CONTRACT_SYNC_TENANT: '  ', CONTRACT_SYNC_LOG_LEVEL: '' });

    expect(flagWins.code).toBe(0);
    expect(blank.code).toBe(0);
  });

  it('a variable that may hold a secret is never quoted or checked', async () => {
    const dir = await repoWith({ 'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1":\n    Name: x\n' });

    const run = await runCli(['validate'], dir, { CONTRACT_SYNC_DATABASE_URL: 'postgres://u:throwaway\u0007@h/db' });

    expect(run.code).toBe(0);
    expect(run.stdout + run.stderr).not.toContain('throwaway');
  });
});

describe('control, invisible and bidi characters in any config string are refused at their line', () => {
  const BASE = configYaml(['acme']);

  it.each<[string, string, string]>([
    [
      'a NUL in clientId',
      BASE.replace('clientId: cs-acme', 'clientId: "cs-acme\\0x"'),
      'contract-sync.yaml:5:15  tenants.acme.clientId  holds a control, invisible or bidirectional character (U+0000)',
    ],
    [
      'an escape in the realm',
      BASE.replace('realm: cms', 'realm: "cms\\e[2J"'),
      'contract-sync.yaml:2:48  auth.realm  holds a control, invisible or bidirectional character (U+001B)',
    ],
    [
      'a bidi override in a secret reference',
      BASE.replace('env: ACME_SECRET', 'env: "ACME\\u202eSECRET"'),
      'contract-sync.yaml:6:26  tenants.acme.clientSecret.env  holds a control, invisible or bidirectional character (U+202E)',
    ],
    [
      'a newline in a desired path',
      `${BASE}desired: { paths: ["contracts/**\\n/*.yaml"] }\n`,
      'contract-sync.yaml:7:20  desired.paths[0]  holds a control, invisible or bidirectional character (U+000A)',
    ],
  ])('%s', async (_case, config, line) => {
    const dir = await repoWith({}, config);

    const run = await runCli(['validate'], dir, { ACME_SECRET: 'throwaway' });

    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`${line}; config values are single-line text\n\n1 error, 0 warnings in contract-sync.yaml\n`);
  });

  it('a policy rule may span lines, but its expression may not hide a bidi override', async () => {
    function rule(expression: string): string {
      return `${BASE}policies:\n  - name: named\n    on: contract\n    validations:\n      - expression: ${expression}\n        message: needs a name\n    action: warn\n`;
    }
    const multiLine = await repoWith({}, rule('|\n          has(object.Name) &&\n          object.Name != ""'));
    const hidden = await repoWith({}, rule('"has(object.Name) \\u202e"'));

    const accepted = await runCli(['validate'], multiLine, { ACME_SECRET: 'throwaway' });
    const refused = await runCli(['validate'], hidden, { ACME_SECRET: 'throwaway' });

    expect(accepted.stdout).not.toContain('control, invisible or bidirectional');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('policies[0].validations[0].expression  holds a control, invisible or bidirectional character (U+202E)\n');
  });

  it('apply with such a config sends nothing', async () => {
    const requests: string[] = [];
    const server = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = configYaml(['acme', 'globex'])
      .replace('https://cms.example.com', url)
      .replace('https://login.example.com', url)
      .replace('clientId: cs-globex', 'clientId: "cs-globex\\0"');
    const dir = await repoWith({ 'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1":\n    Name: x\n' }, config);

    const run = await runCli(['apply', '--auto-approve'], dir, { ACME_SECRET: 'throwaway', GLOBEX_SECRET: 'throwaway' });

    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain('tenants.globex.clientId  holds a control, invisible or bidirectional character (U+0000)');
    expect(requests).toEqual([]);
  });
});

describe('symbolic links and FIFOs inside the desired paths are reported, not skipped silently', () => {
  it('validate and plan warn naming each, read neither, and go on with the regular files', async () => {
    const dir = await repoWith({
      'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1":\n    Name: x\n',
      'outside.yaml': 'tenant: acme\ncontracts:\n  "9":\n    Name: y\n',
    });
    await symlink('../../outside.yaml', path.join(dir, 'contracts/acme/link.yaml'));
    execFileSync('mkfifo', [path.join(dir, 'contracts/acme/pipe.yaml')]);

    const validate = await runCli(['validate'], dir);
    const plan = await runCli(['plan'], dir);

    const warnings = [
      'contracts/acme/link.yaml:1:1  -  warning: not read: a symbolic link, not a regular file (desired-state files are read only as regular files in the repository)',
      'contracts/acme/pipe.yaml:1:1  -  warning: not read: a FIFO (named pipe), not a regular file (desired-state files are read only as regular files in the repository)',
    ];
    expect(validate.code).toBe(0);
    expect(validate.stdout).toBe(`${warnings.join('\n')}\n\n0 errors, 2 warnings; 1 valid contract in 3 files\n`);
    expect(plan.code).toBe(0);
    expect(plan.stderr).toBe(`${warnings.join('\n')}\n`);
    expect(plan.stdout).toContain('~ 1  contracts/acme/a.yaml:3');
    expect(plan.stdout).not.toContain('"9"');
  }, 20_000);
});
