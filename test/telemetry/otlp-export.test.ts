/**
 * OpenTelemetry from real runs: an apply and a drift against the emulator, over a real git
 * repository, with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP receiver that decodes
 * what the SDK sends (JSON). A span per run, per tenant and per request, the runs' metrics by kind
 * and result, request durations;
 * no secret in any attribute; nothing sent without the variable.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator, type Seed } from '../../emulator/index.ts';
import { run, systemClock, type RunEffects } from '../../engine/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { createRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

const cleanups = cleanupsAfterEach();
const SECRET = 'throwaway-secret-acme-0123456789';

interface Export {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: Record<string, unknown>;
}

async function startCollector(): Promise<{ origin: string; received: Export[] }> {
  const received: Export[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'],
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

interface OtlpAttribute {
  readonly key: string;
  readonly value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}

function attributes(list: readonly OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue === undefined ? (value.boolValue ?? value.doubleValue) : Number(value.intValue)),
    ]),
  );
}

interface OtlpSpan {
  readonly name: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly startTimeUnixNano: string | number;
  readonly endTimeUnixNano: string | number;
  readonly attributes?: OtlpAttribute[];
}

interface OtlpMetric {
  readonly name: string;
  readonly sum?: { dataPoints: { asInt?: number | string; asDouble?: number; attributes?: OtlpAttribute[] }[] };
  readonly gauge?: { dataPoints: { asInt?: number | string; asDouble?: number; attributes?: OtlpAttribute[] }[] };
  readonly histogram?: { dataPoints: { count: number | string; attributes?: OtlpAttribute[] }[] };
}

function spansOf(exports: readonly Export[]): OtlpSpan[] {
  return exports
    .filter((entry) => entry.path === '/v1/traces')
    .flatMap((entry) =>
      (entry.body.resourceSpans as { scopeSpans: { spans: OtlpSpan[] }[] }[]).flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
    );
}

function metricsOf(exports: readonly Export[]): OtlpMetric[] {
  return exports
    .filter((entry) => entry.path === '/v1/metrics')
    .flatMap((entry) =>
      (entry.body.resourceMetrics as { scopeMetrics: { metrics: OtlpMetric[] }[] }[]).flatMap((resource) =>
        resource.scopeMetrics.flatMap((scope) => scope.metrics),
      ),
    );
}

function points(metrics: readonly OtlpMetric[], name: string): { value: number; attributes: Record<string, unknown> }[] {
  return metrics
    .filter((metric) => metric.name === name)
    .flatMap((metric) => metric.sum?.dataPoints ?? metric.gauge?.dataPoints ?? [])
    .map((point) => ({ value: Number(point.asInt ?? point.asDouble), attributes: attributes(point.attributes) }));
}

async function setup(): Promise<{ dir: string; adminUrl: string }> {
  const seed: Seed = {
    realm: 'cms',
    tokenTtlSeconds: 3600,
    rateLimit: { requestsPerSecond: 10_000, burst: 10_000 },
    tenants: {
      acme: {
        clients: [{ clientId: 'cs-acme', secret: SECRET, scopes: ['core:read', 'core:write'] }],
        contracts: { '4711': { Name: 'Cleaning' }, '4712': { Name: 'Catering' } },
      },
    },
  };
  const service = await startEmulator(seed);
  cleanups.push(() => service.close());
  const repo = await createRepo({
    'contract-sync.yaml': [
      `api: { baseUrl: "${service.urls.baseUrl}", read: { path: "/contract/{id}" } }`,
      `auth: { url: "${service.urls.authUrl}", realm: ${service.urls.realm} }`,
      'tenants:',
      '  acme: { clientId: cs-acme, clientSecret: { env: SECRET_ACME } }',
      '',
    ].join('\n'),
    'contracts/acme.yaml': 'tenant: acme\ncontracts:\n  "4711":\n    Name: Facility cleaning\n  "4712":\n    Name: Catering\n',
    '.gitignore': '.contract-sync/\n',
  });
  cleanups.push(repo.cleanup);
  return { dir: repo.dir, adminUrl: service.urls.adminUrl };
}

function effects(dir: string, env: Record<string, string>): RunEffects {
  return { cwd: dir, env: { SECRET_ACME: SECRET, ...env }, clock: systemClock };
}

describe('OpenTelemetry from the runs', () => {
  it('exports a span per run and per tenant, and the runs metrics, over OTLP/HTTP JSON', async () => {
    const { dir, adminUrl } = await setup();
    const collector = await startCollector();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin, OTEL_SERVICE_NAME: 'contract-sync-test' };

    const applied = await run(
      { kind: 'apply', where: { repo: '.' }, scope: 'every-contract', mode: 'send', lockTimeoutMs: 5000, removals: { allow: false } },
      effects(dir, env),
    );
    await fetch(`${adminUrl}/contracts/acme/4712`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ Name: 'Catering (edited)' }),
    });
    const drifted = await run({ kind: 'drift', mode: 'report', where: { repo: '.' }, lockTimeoutMs: 5000, removals: { allow: false } }, effects(dir, env));

    expect(applied.kind).toBe('applied');
    expect(drifted.kind).toBe('checked');
    // One export of each signal per run, JSON encoded.
    expect(collector.received.map((entry) => `${entry.path} ${entry.contentType}`).sort()).toEqual([
      '/v1/metrics application/json',
      '/v1/metrics application/json',
      '/v1/traces application/json',
      '/v1/traces application/json',
    ]);
    const resource = (
      collector.received.find((entry) => entry.path === '/v1/traces')!.body.resourceSpans as { resource: { attributes: OtlpAttribute[] } }[]
    )[0]!.resource;
    expect(attributes(resource.attributes)).toMatchObject({ 'service.name': 'contract-sync-test', 'service.version': expect.any(String) });
    const spans = spansOf(collector.received);
    const runs = spans.filter((span) => span.parentSpanId === undefined || span.parentSpanId === '');
    expect(runs.map((span) => [span.name, attributes(span.attributes)['contract_sync.result']])).toEqual([
      ['contract-sync apply', 'succeeded'],
      ['contract-sync drift', 'succeeded'],
    ]);
    const tenants = spans.filter((span) => span.name.endsWith(' tenant'));
    expect(tenants.map((span) => [span.name, span.parentSpanId, attributes(span.attributes)['contract_sync.tenant']])).toEqual([
      ['contract-sync apply tenant', runs[0]!.spanId, 'acme'],
      ['contract-sync drift tenant', runs[1]!.spanId, 'acme'],
    ]);
    expect(attributes(tenants[0]!.attributes)).toMatchObject({ 'contract_sync.contracts': 2, 'contract_sync.changed': 1, 'contract_sync.applied': 1 });
    expect(attributes(tenants[1]!.attributes)).toMatchObject({ 'contract_sync.drifted': 1 });
    const requests = spans.filter((span) => /^(GET|PATCH) \/contract\//.test(span.name));
    // The identity provider's (discovery, a token), under the run's span: the token's tenant is not yet known.
    const identity = spans.filter((span) => span.name.includes('/realms/'));
    expect(
      identity.map((span) => `${span.name} under ${span.parentSpanId === runs[0]!.spanId ? 'apply' : span.parentSpanId === runs[1]!.spanId ? 'drift' : '?'}`),
    ).toEqual([
      'GET /realms/cms/.well-known/openid-configuration under apply',
      'POST /realms/cms/protocol/openid-connect/token under apply',
      'GET /realms/cms/.well-known/openid-configuration under drift',
      'POST /realms/cms/protocol/openid-connect/token under drift',
    ]);
    expect(
      requests
        .map(
          (span) =>
            `${span.name} under ${span.parentSpanId === tenants[0]!.spanId ? 'apply tenant' : span.parentSpanId === tenants[1]!.spanId ? 'drift tenant' : '?'}`,
        )
        .sort(),
    ).toEqual([
      'GET /contract/{id} under apply tenant',
      'GET /contract/{id} under apply tenant',
      'GET /contract/{id} under drift tenant',
      'GET /contract/{id} under drift tenant',
      'PATCH /contract/{id} under apply tenant',
    ]);
    // A tenant's span lasts from its first request to its last, within its run's.
    for (const [tenant, run] of [
      [tenants[0]!, runs[0]!],
      [tenants[1]!, runs[1]!],
    ] as const) {
      const mine = requests.filter((span) => span.parentSpanId === tenant.spanId);
      expect(BigInt(tenant.startTimeUnixNano)).toBe(mine.map((span) => BigInt(span.startTimeUnixNano)).reduce((a, b) => (a < b ? a : b)));
      expect(BigInt(tenant.endTimeUnixNano)).toBe(mine.map((span) => BigInt(span.endTimeUnixNano)).reduce((a, b) => (a > b ? a : b)));
      expect(BigInt(tenant.startTimeUnixNano) >= BigInt(run.startTimeUnixNano)).toBe(true);
    }
    expect(attributes(requests.find((span) => span.name.startsWith('PATCH'))!.attributes)).toEqual({
      'http.request.method': 'PATCH',
      'url.template': '/contract/{id}',
      'server.address': '127.0.0.1',
      'server.port': expect.any(Number),
    });
    const metrics = metricsOf(collector.received);
    expect(points(metrics, 'contract_sync_runs_total').map((point) => point.attributes)).toEqual([
      { kind: 'apply', result: 'succeeded' },
      { kind: 'drift', result: 'succeeded' },
    ]);
    expect(points(metrics, 'contract_sync_ops_sent_total')).toEqual([{ value: 1, attributes: { kind: 'apply', tenant: 'acme' } }]);
    expect(points(metrics, 'contract_sync_drifted_contracts')).toEqual([{ value: 1, attributes: { tenant: 'acme' } }]);
    expect(points(metrics, 'contract_sync_contracts_planned_total').map((point) => point.value)).toEqual([2, 2]);
    expect(metrics.map((metric) => metric.name)).toContain('contract_sync_run_duration_seconds');
    const durations = metrics.filter((metric) => metric.name === 'contract_sync_request_duration_seconds').flatMap((metric) => metric.histogram!.dataPoints);
    expect(durations.map((point) => [attributes(point.attributes), Number(point.count)])).toEqual([
      [{ method: 'GET', result: 'ok' }, 2],
      [{ method: 'PATCH', result: 'ok' }, 1],
      [{ method: 'GET', result: 'ok' }, 2],
    ]);

    expect(JSON.stringify(collector.received)).not.toContain(SECRET);
  });

  it('exports a plan: its span with a span per tenant, and with --refresh each read under its tenant', async () => {
    const { dir } = await setup();
    const collector = await startCollector();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin };

    const stored = await run({ kind: 'plan', where: { repo: '.' }, known: 'store', scope: 'every-contract' }, effects(dir, env));
    const live = await run({ kind: 'plan', where: { repo: '.' }, known: 'live', scope: 'every-contract' }, effects(dir, env));

    expect([stored.kind, live.kind]).toEqual(['planned', 'planned']);
    const spans = spansOf(collector.received);
    const runs = spans.filter((span) => span.parentSpanId === undefined || span.parentSpanId === '');
    expect(
      runs.map((span) => [span.name, attributes(span.attributes)['contract_sync.contracts'], attributes(span.attributes)['contract_sync.changed']]),
    ).toEqual([
      ['contract-sync plan', 2, 2],
      ['contract-sync plan', 2, 1],
    ]);
    const tenants = spans.filter((span) => span.name === 'contract-sync plan tenant');
    expect(tenants.map((span) => span.parentSpanId)).toEqual([runs[0]!.spanId, runs[1]!.spanId]);
    const reads = spans.filter((span) => span.name === 'GET /contract/{id}');
    expect(reads.map((span) => span.parentSpanId)).toEqual([tenants[1]!.spanId, tenants[1]!.spanId]);
    const metrics = metricsOf(collector.received);
    expect(points(metrics, 'contract_sync_runs_total').map((point) => point.attributes)).toEqual([
      { kind: 'plan', result: 'succeeded' },
      { kind: 'plan', result: 'succeeded' },
    ]);
    expect(points(metrics, 'contract_sync_contracts_changed_total')).toEqual([
      { value: 2, attributes: { kind: 'plan', tenant: 'acme' } },
      { value: 1, attributes: { kind: 'plan', tenant: 'acme' } },
    ]);
    expect(JSON.stringify(collector.received)).not.toContain(SECRET);
  });

  it('ends the run within the export bound when the collector never answers, its result unchanged', { timeout: 20_000 }, async () => {
    const { dir } = await setup();
    const hanging: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    });
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}` };

    const notExported: string[] = [];

    const started = Date.now();
    const applied = await run(
      { kind: 'apply', where: { repo: '.' }, scope: 'every-contract', mode: 'send', lockTimeoutMs: 5000, removals: { allow: false } },
      { ...effects(dir, env), onEvent: (event) => (event.type === 'telemetry-not-exported' ? notExported.push(event.message) : undefined) },
    );
    const took = Date.now() - started;

    expect(applied.kind === 'applied' && applied.report.summary).toMatchObject({ applied: 1, failed: 0 });
    // 5 s for the exporters, 1 s more at most for the providers to let go, and the run itself.
    expect(took).toBeLessThan(6000 + 3000);
    expect(notExported).toEqual([
      expect.stringMatching(
        /^telemetry not exported \(metrics to 127\.0\.0\.1:\d+: timed out; .*traces to 127\.0\.0\.1:\d+: timed out\); the run's result stands$/,
      ),
    ]);
  });

  it.each([
    ['answers 500', 500, 'HTTP 500'],
    ['refuses the connection', 'closed', 'ECONNREFUSED'],
  ] as const)('says once, naming the signal, its host and why, when the collector %s; the result unchanged, no secret said', async (_name, answer, why) => {
    const { dir } = await setup();
    let origin: string;
    if (answer === 'closed') {
      const closed: Server = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
    } else {
      const failing: Server = createServer((req, res) => req.resume().on('end', () => res.writeHead(answer).end('nope')));
      await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
      cleanups.push(async () => {
        failing.closeAllConnections();
        await new Promise<void>((resolve) => failing.close(() => resolve()));
      });
      origin = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
    }
    const events: string[] = [];
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: origin, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${SECRET}` };

    const applied = await run(
      { kind: 'apply', where: { repo: '.' }, scope: 'every-contract', mode: 'send', lockTimeoutMs: 5000, removals: { allow: false } },
      { ...effects(dir, env), onEvent: (event) => (event.type === 'telemetry-not-exported' ? events.push(event.message) : undefined) },
    );

    expect(applied.kind === 'applied' && applied.report.summary).toMatchObject({ applied: 1, failed: 0 });
    const host = new URL(origin).host;
    expect(events).toEqual([`telemetry not exported (metrics to ${host}: ${why}; traces to ${host}: ${why}); the run's result stands`]);
    expect(events.join('')).not.toContain(SECRET);
  });

  it('plan says on stderr, in one line, that its telemetry was not exported, and exits as it would have', async () => {
    const { dir } = await setup();
    const failing: Server = createServer((req, res) => req.resume().on('end', () => res.writeHead(503).end()));
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      failing.closeAllConnections();
      await new Promise<void>((resolve) => failing.close(() => resolve()));
    });
    const host = `127.0.0.1:${(failing.address() as AddressInfo).port}`;

    const planned = await runCli(['plan', '--repo', dir], ROOT, { SECRET_ACME: SECRET, OTEL_EXPORTER_OTLP_ENDPOINT: `http://${host}` });

    expect(planned.code).toBe(0);
    expect(planned.stderr).toContain(
      `contract-sync plan: telemetry not exported (metrics to ${host}: still refused when retries ran out; traces to ${host}: still refused when retries ran out); the run's result stands\n`,
    );
  });

  it('sends nothing without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const { dir } = await setup();
    const collector = await startCollector();

    const applied = await run(
      { kind: 'apply', where: { repo: '.' }, scope: 'every-contract', mode: 'send', lockTimeoutMs: 5000, removals: { allow: false } },
      effects(dir, { OTEL_SERVICE_NAME: 'x' }),
    );

    expect(applied.kind).toBe('applied');
    expect(collector.received).toEqual([]);
  });
});
