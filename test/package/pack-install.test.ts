/**
 * The package as users get it: `npm pack` (which builds dist/ through `prepare`), the tarball
 * installed with npm into an empty directory (dependencies come from the registry), and the
 * installed CLI run there: --version, validate on a generated repository, the emulator, and the
 * library import.
 */
import { isAscii } from 'node:buffer';
import { execFile, spawn } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { EMPTY_SAVED_PLAN } from '../helpers/files.ts';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const packageJson = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };

let work: string;
let consumer: string;
let tarballFiles: string[];

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'contract-sync-pack-'));
  consumer = path.join(work, 'consumer');
  await mkdir(consumer);

  const packed = await exec(NPM, ['pack', '--json', '--pack-destination', work], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  // Lifecycle scripts (prepare: the build) may print before npm's JSON.
  const [tarball] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[/m))) as { filename: string; files: { path: string }[] }[];
  tarballFiles = tarball!.files.map((file) => file.path);

  await writeFile(path.join(consumer, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module' })}\n`);
  await exec(NPM, ['install', '--no-audit', '--no-fund', path.join(work, tarball!.filename)], { cwd: consumer, maxBuffer: 16 * 1024 * 1024 });
}, 240_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return exec(command, [...args], { ...options, env: { ...process.env, ...options.env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

/**
 * What a run evaluated, from V8's coverage: the files it loaded, and the bundle's modules whose
 * code ran. esbuild wraps each module that is loaded on demand in a function named after its
 * file (`"dist/engine/api/client.js"() { ... }`), called at the module's first import.
 */
async function evaluatedBy(args: readonly string[], cwd = consumer): Promise<{ files: string[]; bundled: string[] }> {
  const bin = path.join(consumer, 'node_modules/contract-sync/bin/contract-sync.js');
  const coverage = await mkdtemp(path.join(work, 'coverage-'));
  const result = await run(process.execPath, [bin, ...args], { cwd, env: { NODE_V8_COVERAGE: coverage, NODE_DISABLE_COMPILE_CACHE: '1' } });
  expect(result.code, result.stderr).toBe(0);
  const scripts = [];
  for (const name of await readdir(coverage)) {
    const report = JSON.parse(await readFile(path.join(coverage, name), 'utf8')) as {
      result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
    };
    scripts.push(...report.result);
  }
  const bundle = scripts.filter((script) => script.url.replaceAll('\\', '/').endsWith('/contract-sync/dist/cli/main.cjs'));
  expect(bundle).toHaveLength(1);
  const bundled = bundle[0]!.functions
    .filter((fn) => /^(dist|node_modules)\/\S+\.[cm]?js$/.test(fn.functionName) && fn.ranges[0]!.count > 0)
    .map((fn) => fn.functionName);
  return { files: scripts.map((script) => script.url), bundled };
}

describe('the packed package', () => {
  it('holds the compiled code, specs, README, LICENSE and the example config, and no sources, tests or project files', () => {
    const unwanted = tarballFiles.filter(
      (file) =>
        /^(test|bench|\.ci|scripts|engine|emulator\/.*\.ts$|node_modules)\b/.test(file) ||
        // examples/: only the demo repository, the CI files, the notification examples and the policy pack (shipped documents point to them), no other code.
        (/^examples\//.test(file) &&
          !/^examples\/(demo-repo|github-actions|gitlab-ci)\/.*\.ya?ml$/.test(file) &&
          !/^examples\/notify\/(contract-sync\.yaml|receiver\.mjs|verify_signature\.py)$/.test(file) &&
          !/^examples\/policies\/.*\.(ya?ml|md)$/.test(file)) ||
        (/\.ts$/.test(file) && !/\.d\.ts$/.test(file)) ||
        /^(tsconfig.*|eslint\.config\.js|vitest\.config\.ts|package-lock\.json|bin\/contract-sync-dev\.js)$/.test(file),
    );

    expect(unwanted).toEqual([]);
    expect(tarballFiles).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'package.json',
        'bin/contract-sync.js',
        'bin/v8-flags.js',
        'bin/code-cache.js',
        'contracts.example.yaml',
        'dist/engine/index.js',
        'dist/engine/index.d.ts',
        'dist/engine/cli/main.js',
        'dist/cli/main.cjs',
        'dist/engine/model/precompiled-schemas.cjs',
        'dist/engine/model/precompiled-schemas-run.cjs',
        'dist/emulator/index.js',
        'emulator/seed.example.yaml',
        'specs/contracts.schema.json',
        'specs/config.schema.json',
        'examples/demo-repo/contract-sync.yaml',
        'examples/github-actions/contract-sync.yml',
        'examples/gitlab-ci/.gitlab-ci.yml',
        'examples/notify/receiver.mjs',
      ]),
    );
  });

  it('ships the CLI bundle in ASCII, so that the bin reads it as a string of one-byte characters (scripts/bundle-cli.ts)', async () => {
    const bytes = await readFile(path.join(consumer, 'node_modules/contract-sync/dist/cli/main.cjs'));
    expect(isAscii(bytes)).toBe(true);
  });

  it('runs `npx contract-sync --version` after npm install', { timeout: 30_000 }, async () => {
    const result = await run(NPX, ['--no', '--', 'contract-sync', '--version'], { cwd: consumer });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${packageJson.version}\n`);
  });

  it('validates a generated repository, whose $schema line resolves inside node_modules', { timeout: 30_000 }, async () => {
    const repo = path.join(work, 'repo');
    await mkdir(path.join(repo, 'contracts/acme'), { recursive: true });
    await writeFile(
      path.join(repo, 'contract-sync.yaml'),
      [
        'api: { baseUrl: https://cms.example.com }',
        'auth: { url: https://login.example.com, realm: cms }',
        'tenants:',
        '  acme: { clientId: contract-sync-acme, clientSecret: { env: ACME_CLIENT_SECRET } }',
        '',
      ].join('\n'),
    );
    const schemaLine = '# yaml-language-server: $schema=../../node_modules/contract-sync/specs/contracts.schema.json';
    await writeFile(path.join(repo, 'contracts/acme/cleaning.yaml'), `${schemaLine}\ntenant: acme\ncontracts:\n  "4711": { Name: Facility cleaning }\n`);
    const broken = path.join(repo, 'contracts/acme/broken.yaml');

    const valid = await run(NPX, ['--no', '--', 'contract-sync', 'validate', '--repo', repo], { cwd: consumer });
    await writeFile(broken, 'tenant: acme\ncontracts:\n  "4712": { Nmae: Typo }\n');
    const invalid = await run(NPX, ['--no', '--', 'contract-sync', 'validate', '--repo', repo], { cwd: consumer });
    await rm(broken);

    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
    expect(valid.stdout).toContain('1 valid contract in 1 file');
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toContain('Nmae');
    await expect(access(path.join(consumer, 'node_modules/contract-sync/specs/contracts.schema.json'))).resolves.toBeUndefined();
  });

  it('starts the emulator with the shipped example seed and serves discovery', { timeout: 60_000 }, async () => {
    // detached: its own process group, so that npx and the CLI under it stop together.
    const child = spawn(NPX, ['--no', '--', 'contract-sync', 'emulator', '--seed', 'node_modules/contract-sync/emulator/seed.example.yaml', '--port', '0'], {
      cwd: consumer,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const ready = await new Promise<string>((resolve, reject) => {
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
        });
        child.once('exit', (code) => reject(new Error(`emulator exited with ${code} before its ready line: ${stderr}`)));
      });
      const urls = JSON.parse(ready) as { baseUrl: string; authUrl: string; realm: string };
      const discovery = await fetch(`${urls.authUrl}/realms/${urls.realm}/.well-known/openid-configuration`);

      expect(urls.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(discovery.status).toBe(200);
      expect(((await discovery.json()) as { token_endpoint: string }).token_endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
  });

  it(
    "reports the same problems with the build's precompiled schemas as the sources do with Ajv, without loading Ajv's compiler, from the CLI bundle and the library's modules",
    { timeout: 60_000 },
    async () => {
      const repo = path.join(work, 'mistakes');
      await mkdir(path.join(repo, 'contracts/acme'), { recursive: true });
      const config = [
        'api: { baseUrl: not a url, timeoutMs: 0 }',
        'auth: { url: https://login.example.com, realm: "" }',
        'tenants:',
        '  acme: { clientId: cs-acme, clientSecret: { env: ACME_SECRET }, colour: red }',
        '',
      ];
      const contracts = [
        'tenant: acme',
        'contracts:',
        '  "1": { Name: 2027, Nmae: x, Area: "12a", ValidFrom: 2027-01-01, SupplierNoticePeriod: { Weeks: 2 } }',
        '  "2": { Name: "", Company: [{ RelationType: Supplier }], Type: [{ Lookup: Service, IsDora: "yes" }], ValidTo: "2027-01-01T00:00:00+02:00" }',
        '',
      ];
      const check =
        "const { main } = await import(process.argv[1]); const { createRequire } = await import('node:module');" +
        ' const io = { stdout: process.stdout, stderr: process.stderr, env: {}, cwd: process.cwd() };' +
        ' process.exitCode = await main(process.argv.slice(2), io);' +
        ' const compiler = Object.keys(createRequire(import.meta.url).cache).filter((file) => /[\\/]ajv[\\/]dist[\\/](core|compile)/.test(file));' +
        ' process.stderr.write(`ajv compiler modules: ${compiler.length}`);';
      // The bundle (dist/cli/, what the bin runs) finds the precompiled schemas from another directory than tsc's modules do.
      const mains = ['dist/cli/main.cjs', 'dist/engine/cli/main.js'].map((file) => pathToFileURL(path.join(consumer, 'node_modules/contract-sync', file)).href);
      const outputs: { main: string; built: string; sources: string; compilerLoaded: string }[] = [];

      for (const [name, content] of [
        ['contract-sync.yaml', config],
        ['contracts/acme/mistakes.yaml', contracts],
      ] as const) {
        if (name === 'contracts/acme/mistakes.yaml')
          await writeFile(
            path.join(repo, 'contract-sync.yaml'),
            'api: { baseUrl: https://cms.example.com }\nauth: { url: https://login.example.com, realm: cms }\ntenants:\n  acme: { clientId: cs-acme, clientSecret: { env: ACME_SECRET } }\n',
          );
        await writeFile(path.join(repo, name), content.join('\n'));
        const args = ['validate', '--repo', repo, '--format', 'json'];
        const sources = await runCli(args, consumer);
        for (const main of mains) {
          const built = await run(process.execPath, ['--input-type=module', '-e', check, main, ...args], { cwd: consumer });
          outputs.push({ main, built: built.stdout, sources: sources.stdout, compilerLoaded: built.stderr });
        }
      }

      for (const { main, built, sources, compilerLoaded } of outputs) {
        expect(JSON.parse(built), main).toEqual(JSON.parse(sources));
        expect(compilerLoaded, main).toBe('ajv compiler modules: 0');
      }
      expect(outputs).toHaveLength(4);
      expect(outputs.every(({ built }) => (JSON.parse(built) as unknown[]).length >= 4)).toBe(true);
    },
  );

  it(
    "checks each op shape of a PATCH body, a live read and a saved plan with the build's precompiled schemas, without loading Ajv's compiler",
    { timeout: 30_000 },
    async () => {
      const dist = pathToFileURL(path.join(consumer, 'node_modules/contract-sync/dist/engine')).href;
      const check =
        `const { compileSchema } = await import('${dist}/model/schema-validator.js');` +
        ` const { opShapes } = await import('${dist}/model/json-schemas.js');` +
        ` const { contractReadSchema } = await import('${dist}/model/read-schema.js');` +
        ` const { planSchema } = await import('${dist}/plan/schema.js');` +
        " const { createRequire } = await import('node:module');" +
        ' const schemas = [...opShapes().map((shape) => shape.schema), contractReadSchema(), planSchema()];' +
        ' const issues = schemas.map((schema) => compileSchema(schema)(42).length);' +
        ' const compiler = Object.keys(createRequire(import.meta.url).cache).filter((file) => /[\\/]ajv[\\/]dist[\\/](core|compile)/.test(file));' +
        ' process.stdout.write(JSON.stringify({ schemas: schemas.length, refused: issues.filter((count) => count > 0).length, compiler: compiler.length }));';

      const result = await run(process.execPath, ['--input-type=module', '-e', check], { cwd: consumer });

      expect(result.code, result.stderr).toBe(0);
      const { schemas, refused, compiler } = JSON.parse(result.stdout) as { schemas: number; refused: number; compiler: number };
      expect(schemas).toBeGreaterThan(10);
      // Each refuses a value of the wrong shape: a check that ran, not a stand-in.
      expect(refused).toBe(schemas);
      expect(compiler).toBe(0);
    },
  );

  it('ships every file a shipped document or a file init writes points to', { timeout: 60_000 }, async () => {
    const installed = path.join(consumer, 'node_modules/contract-sync');
    const shipped = new Set(tarballFiles);
    const shippedDirs = new Set(
      tarballFiles.flatMap((file) =>
        file
          .split('/')
          .slice(0, -1)
          .map((_, index, parts) => parts.slice(0, index + 1).join('/')),
      ),
    );
    function isShipped(file: string): boolean {
      const normal = path.posix.normalize(file).replace(/\/$/, '');
      return shipped.has(normal) || shippedDirs.has(normal);
    }
    // A link of a markdown file (relative, not an anchor or a URL), from its directory; a path named
    // in the text of a file (`examples/github-actions`, `emulator/seed.example.yaml`), from the
    // package's root. README.md and docs/architecture.md also describe the source repository
    // (engine/, bench/, test/): there only their links count.
    const PATH_IN_TEXT = /(?<![\w./-])((?:examples|emulator|engine|docs|specs|bench|scripts|test|bin|dist)\/[\w./-]*[\w/])/g;
    function pointers(file: string, text: string): string[] {
      const links = file.endsWith('.md')
        ? [...text.matchAll(/\]\(([^)\s]+)\)/g)]
            .map((match) => match[1]!)
            .filter((target) => !/^([a-z]+:|#)/.test(target))
            .map((target) => path.posix.join(path.posix.dirname(file), target.replace(/#.*$/, '')))
        : [];
      const named = file === 'README.md' || file === 'docs/architecture.md' ? [] : [...text.matchAll(PATH_IN_TEXT)].map((match) => match[1]!);
      return [...links, ...named];
    }
    const missing: string[] = [];
    for (const file of tarballFiles.filter((name) => /\.(md|ya?ml|json)$/.test(name) && !name.startsWith('dist/') && name !== 'package.json')) {
      for (const target of pointers(file, await readFile(path.join(installed, file), 'utf8'))) if (!isShipped(target)) missing.push(`${file} -> ${target}`);
    }
    // What init writes, from the installed CLI, for each CI provider.
    for (const ci of ['github', 'gitlab']) {
      const repo = path.join(work, `init-pointers-${ci}`);
      const result = await run(NPX, ['--no', '--', 'contract-sync', 'init', '--dir', repo, '--ci', ci, '--tenant', 'acme'], { cwd: consumer });
      expect(result.code, result.stderr).toBe(0);
      const written = ['contract-sync.yaml', 'contracts/acme/example.yaml', ci === 'github' ? '.github/workflows/contract-sync.yml' : '.gitlab-ci.yml'];
      for (const file of written)
        for (const target of pointers(file, await readFile(path.join(repo, file), 'utf8')))
          if (!isShipped(target)) missing.push(`init --ci ${ci}: ${file} -> ${target}`);
    }

    expect(missing).toEqual([]);
  });

  it(
    'init --dir SUBDIR writes $schema lines that resolve into the installed package, and says the next step of an installed copy',
    { timeout: 30_000 },
    async () => {
      const repo = path.join(consumer, 'repos/acme-contracts');

      const result = await run(NPX, ['--no', '--', 'contract-sync', 'init', '--dir', 'repos/acme-contracts', '--tenant', 'acme'], { cwd: consumer });

      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).not.toContain('npm install');
      expect(result.stdout).toContain('npx contract-sync validate --chdir repos/acme-contracts');
      for (const [file, schema] of [
        ['contract-sync.yaml', 'config'],
        ['contracts/acme/example.yaml', 'contracts'],
      ] as const) {
        const line = (await readFile(path.join(repo, file), 'utf8')).split('\n')[0]!;
        const target = path.resolve(path.dirname(path.join(repo, file)), line.replace(/^# yaml-language-server: \$schema=/, ''));
        expect(target, line).toBe(path.join(consumer, `node_modules/contract-sync/specs/${schema}.schema.json`));
        await expect(access(target)).resolves.toBeUndefined();
      }
      const validated = await run(NPX, ['--no', '--', 'contract-sync', 'validate', '--chdir', 'repos/acme-contracts'], { cwd: consumer });
      expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    },
  );

  it("exports the emulator as `contract-sync/emulator`, which serves the shipped seed's clients as its README lists them", { timeout: 60_000 }, async () => {
    const installed = path.join(consumer, 'node_modules/contract-sync');
    const script = [
      "const { readSeedFile, startEmulator } = await import('contract-sync/emulator');",
      "const seed = await readSeedFile('node_modules/contract-sync/emulator/seed.example.yaml');",
      'const emulator = await startEmulator(seed, { port: 0 });',
      'const { authUrl, realm } = emulator.urls;',
      'const discovery = await (await fetch(`${authUrl}/realms/${realm}/.well-known/openid-configuration`)).json();',
      "const token = await fetch(discovery.token_endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'contract-sync-acme', client_secret: 'dev-secret-acme', scope: 'core:read' }) });",
      'await emulator.close();',
      'console.log(JSON.stringify({ token: token.status, clients: Object.fromEntries(Object.entries(seed.tenants).map(([tenant, t]) => [tenant, (t.clients ?? []).map((c) => [c.clientId, c.secret])])) }));',
    ].join('\n');

    const result = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer });
    const readme = await readFile(path.join(installed, 'emulator/README.md'), 'utf8');

    expect(result.code, result.stderr).toBe(0);
    const { token, clients } = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { token: number; clients: Record<string, [string, string][]> };
    expect(token).toBe(200);
    expect(readme).toContain("import { readSeedFile, startEmulator } from 'contract-sync/emulator';");
    for (const [tenant, list] of Object.entries(clients))
      for (const [clientId, secret] of list) expect(readme).toContain(`| \`${tenant}\` | \`${clientId}\` | \`${secret}\``);
  });

  it('exports the library, with type declarations, from `import ... from "contract-sync"`', { timeout: 30_000 }, async () => {
    const script =
      "const m = await import('contract-sync'); console.log(JSON.stringify({ fields: m.FIELDS.length, validate: typeof m.validateDesiredState }));";

    const result = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer });
    const manifest = JSON.parse(await readFile(path.join(consumer, 'node_modules/contract-sync/package.json'), 'utf8')) as {
      exports: { '.': { types: string } };
    };

    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ fields: 19, validate: 'function' });
    await expect(access(path.join(consumer, 'node_modules/contract-sync', manifest.exports['.'].types))).resolves.toBeUndefined();
  });

  it('keeps a code cache per command, written by the first run and used by the next (bin/code-cache.js)', { timeout: 30_000 }, async () => {
    const base = await mkdtemp(path.join(work, 'compile-cache-'));
    const env = { NODE_COMPILE_CACHE: base };
    const bin = path.join(consumer, 'node_modules/contract-sync/bin/contract-sync.js');
    const dir = path.join(base, `contract-sync-code-cache${process.getuid ? `-${process.getuid()}` : ''}`);
    const validate = ['validate', '--repo', path.join(ROOT, 'examples/demo-repo')];

    expect((await run(process.execPath, [bin, '--version'], { cwd: consumer, env })).code).toBe(0);
    expect(await readdir(dir)).toEqual([expect.stringMatching(/^cli-v\d+\.\d+\.\d+-/)]);

    const first = await run(process.execPath, [bin, ...validate], { cwd: consumer, env });
    const files = (await readdir(dir)).filter((name) => name.startsWith('validate-'));
    const written = await stat(path.join(dir, files[0]!));
    const second = await run(process.execPath, [bin, ...validate], { cwd: consumer, env });

    expect(files).toEqual([expect.stringMatching(/^validate-v\d+\.\d+\.\d+-/)]);
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(second.stdout).toBe(first.stdout);
    // Used, not written again.
    expect((await stat(path.join(dir, files[0]!))).mtimeMs).toBe(written.mtimeMs);
  });

  it(
    "shows a saved plan, checked by the build's precompiled plan schema from the CLI bundle, without loading Ajv's compiler",
    { timeout: 30_000 },
    async () => {
      const plan = path.join(work, 'saved-plan.json');
      await writeFile(plan, JSON.stringify(EMPTY_SAVED_PLAN));

      const { files } = await evaluatedBy(['show', plan]);

      // The bundle holds the first file of validators; the plan's schema is in the second, beside tsc's modules.
      expect(files.filter((file) => file.endsWith('/dist/engine/model/precompiled-schemas-run.cjs'))).toHaveLength(1);
      expect(files.filter((file) => /[\\/]ajv[\\/]dist[\\/](core|compile)/.test(file))).toEqual([]);
    },
  );

  it('runs neither the emulator, the OpenID provider, pg nor the HTTP client for --version and validate (the CLI bundle)', { timeout: 60_000 }, async () => {
    const heavy = /(^|\/)node_modules\/(oidc-provider|openid-client|pg)\/|(^|\/)dist\/(emulator|engine\/api)\//;

    const version = await evaluatedBy(['--version']);
    const validate = await evaluatedBy(['validate', '--repo', path.join(ROOT, 'examples/demo-repo')]);
    // The control: a command that does need the HTTP client and the OpenID client.
    const importing = await evaluatedBy(['import', '--help']);

    expect(validate.bundled).toContain('dist/engine/cli/validate.js');
    expect(version.bundled.filter((module) => /^dist\/engine\/cli\/(validate|plan|apply|drift|import|show|emulator|state|init)\.js$/.test(module))).toEqual([]);
    for (const run of [version, validate]) {
      expect(run.files.filter((file) => heavy.test(file))).toEqual([]);
      expect(run.bundled.filter((module) => heavy.test(module))).toEqual([]);
    }
    expect(importing.bundled).toEqual(expect.arrayContaining(['dist/engine/api/client.js', expect.stringMatching(/^node_modules\/openid-client\//)]));
  });
});
