// Loopback PATCH throughput of the emulator (token check, rate limit, validation, apply), in-process.
// Bounded: ROUNDS rounds of at most REQUESTS requests or SECONDS seconds each. Prints one JSON line.
//   npx tsx bench/emulator.ts
import { startEmulator } from '../emulator/index.ts';

const ROUNDS = 5;
const REQUESTS = 2000;
const SECONDS = 3;
const CONCURRENCY = 16;

const seed = {
  realm: 'cms',
  rateLimit: { requestsPerSecond: 1_000_000, burst: 1_000_000 },
  tenants: {
    acme: {
      clients: [{ clientId: 'bench', secret: 'bench-secret', scopes: ['core:write'] }],
      contracts: { '4711': { Name: 'Bench', Company: [{ Id: 1, RelationType: 'Supplier' }] } },
    },
  },
};

const emulator = await startEmulator(seed);
try {
  const tokenResponse = await fetch(`${emulator.urls.authUrl}/realms/cms/protocol/openid-connect/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'bench', client_secret: 'bench-secret', scope: 'core:write' }),
  });
  const { access_token: accessToken } = (await tokenResponse.json()) as { access_token: string };
  const headers = { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json' };

  async function round(): Promise<{ requests: number; seconds: number; failures: number }> {
    const started = performance.now();
    const deadline = started + SECONDS * 1000;
    let sent = 0;
    let failures = 0;
    async function worker(): Promise<void> {
      while (sent < REQUESTS && performance.now() < deadline) {
        const n = sent;
        sent += 1;
        const response = await fetch(`${emulator.urls.baseUrl}/contract/4711`, {
          method: 'PATCH',
          headers,
          body: JSON.stringify([
            { op: 'Replace', path: '/Contract/Name', value: `Bench ${n}` },
            { op: 'Replace', path: '/Contract/AnnualExpensesAmount', value: n },
          ]),
        });
        await response.arrayBuffer();
        if (response.status !== 204) failures += 1;
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return { requests: sent, seconds: (performance.now() - started) / 1000, failures };
  }

  await round(); // warm-up: JIT, connection pool
  const rates: number[] = [];
  let failures = 0;
  for (let i = 0; i < ROUNDS; i += 1) {
    const result = await round();
    rates.push(result.requests / result.seconds);
    failures += result.failures;
  }
  const sorted = [...rates].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(
    JSON.stringify({
      bench: 'emulator-patch',
      requestsPerSecond: Math.round(median),
      rounds: rates.map(Math.round),
      concurrency: CONCURRENCY,
      opsPerRequest: 2,
      failures,
      node: process.version,
    }),
  );
  if (failures > 0) process.exitCode = 1;
} finally {
  await emulator.close();
}
