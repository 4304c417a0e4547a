/** `contract-sync emulator`: the reference CMS + identity provider (emulator/), until SIGINT/SIGTERM. */
import path from 'node:path';
import { pino } from 'pino';
import { EXIT, failWith, parseCommand, UsageError, type CliIo, type ExitCode } from './io.ts';

export const EMULATOR_HELP = `Usage: contract-sync emulator --seed FILE [--host 127.0.0.1] [--port 0]

Serves a reference Contract Management Service and its OpenID Connect provider on one port.
When ready, prints one JSON line {"baseUrl","authUrl","realm","adminUrl"} on stdout; request logs
go to stderr. Stops on SIGINT or SIGTERM. See emulator/README.md and specs/emulator-seed.schema.json.

Options:
  --seed FILE   realm, tenants, clients and contracts (YAML or JSON)
  --host HOST   interface to listen on (default 127.0.0.1)
  --port PORT   port to listen on (default 0: any free port)

Exit codes: 0 stopped by SIGINT or SIGTERM, 1 error (no --seed, an invalid seed file or port).
`;

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) throw new UsageError(`--port must be an integer from 0 to 65535; got "${value}"`);
  return port;
}

function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    function onSignal(signal: string): void {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    }
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

export async function emulatorCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, helped } = parseCommand(io, EMULATOR_HELP, args, false, {
    seed: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
  });
  if (helped) return EXIT.ok;
  if (values.seed === undefined) throw new UsageError('--seed FILE is required');
  const port = parsePort(values.port);

  // Loaded on use: oidc-provider is heavy and warns on import, which other commands must not pay for.
  const { readSeedFile, SeedError, startEmulator } = await import('../../emulator/index.ts');
  let seed;
  try {
    seed = await readSeedFile(path.resolve(io.cwd, values.seed), values.seed);
  } catch (error) {
    if (!(error instanceof SeedError)) throw error;
    return failWith(io, 'emulator', error.message);
  }
  const logger = pino({ name: 'contract-sync-emulator' }, io.stderr);
  const emulator = await startEmulator(seed, { host: values.host, port, logger });
  io.stdout.write(`${JSON.stringify(emulator.urls)}\n`);

  const signal = await waitForSignal();
  logger.info({ signal }, 'shutting down');
  await emulator.close();
  return EXIT.ok;
}
