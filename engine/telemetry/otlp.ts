/**
 * Adapter: a finished run's spans and metrics sent over OTLP/HTTP (JSON, as the protocol allows)
 * with the OpenTelemetry JS SDK. Loaded only when OTEL_* says where to send (targets.ts): a run
 * without it never imports this file, so start-up is unchanged. The providers live for one run and
 * are shut down at its end, which flushes what they hold; the export is bounded by `timeoutMs`,
 * and a receiver that fails or hangs costs the run at most that, never its result.
 */
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { METRICS, type RunSignals } from './run-signals.ts';
import type { Clock } from '../io/clock.ts';
import type { OtlpTargets } from './targets.ts';

const SCOPE = 'contract-sync';

/** An exporter's result as the SDK hands it to its processor (ExportResult of @opentelemetry/core). */
interface ExportResult {
  readonly code: number;
  readonly error?: Error;
}

/** Where a signal went, for a problem's line: the endpoint's host and port (never its path, query or credentials). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'its endpoint';
  }
}

/** Why an export failed, in words that carry no secret: the HTTP status or the network error's code, else the error's name. */
function failureOf(error: Error | undefined): string {
  const { code } = (error ?? {}) as { code?: unknown };
  if (typeof code === 'number') return `HTTP ${code}`;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  const cause = (error?.cause ?? {}) as { code?: unknown };
  if (typeof cause.code === 'string' && /^[A-Z_]+$/.test(cause.code)) return cause.code;
  // The exporters' own bound ('Request timed out'); other messages may quote what the collector said.
  if (error !== undefined && /timed out|timeout/i.test(error.message)) return 'timed out';
  // 429, 502, 503, 504 and refused connections are retried until the bound; the last answer is not kept.
  if (error?.message === 'Export failed with retryable status') return 'still refused when retries ran out';
  return error?.name ?? 'failed';
}

/**
 * `exporter` with every result it hands back watched: a failure becomes a line of `problems` (the
 * SDK's processors keep failures to themselves).
 */
function watched<T extends { export(items: never, done: (result: ExportResult) => void): void }>(exporter: T, what: string, problems: string[]): T {
  const exportItems = exporter.export.bind(exporter) as (items: unknown, done: (result: ExportResult) => void) => void;
  (exporter as { export(items: unknown, done: (result: ExportResult) => void): void }).export = (items, done) =>
    exportItems(items, (result) => {
      // 0: ExportResultCode.SUCCESS.
      if (result.code !== 0) problems.push(`${what}: ${failureOf(result.error)}`);
      done(result);
    });
  return exporter;
}

/** Waits for `work` at most `timeoutMs` on `clock`; false when the bound came first. */
async function settle(work: Promise<unknown>, clock: Clock, timeoutMs: number): Promise<boolean> {
  const stop = new AbortController();
  const finished = work.then(
    () => true,
    () => true,
  );
  const deadline = clock.sleep(timeoutMs, stop.signal).then(
    () => false,
    () => false,
  );
  try {
    return await Promise.race([finished, deadline]);
  } finally {
    stop.abort();
  }
}

/**
 * Exports a run's signals; resolves, within `timeoutMs` and a second, with what went wrong (one
 * line per failed export, or the bound reached), never rejects.
 */
export async function exportRunSignals(
  signals: RunSignals,
  targets: OtlpTargets,
  options: { readonly version: string; readonly timeoutMs: number; readonly clock: Clock },
): Promise<readonly string[]> {
  const problems: string[] = [];
  const resource = resourceFromAttributes({ 'service.name': targets.serviceName, 'service.version': options.version });
  const work: Promise<unknown>[] = [];
  if (targets.traces !== undefined) {
    const exporter = watched(
      new OTLPTraceExporter({ url: targets.traces.url, headers: { ...targets.traces.headers }, timeoutMillis: options.timeoutMs }),
      `traces to ${hostOf(targets.traces.url)}`,
      problems,
    );
    const provider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter, exportTimeoutMillis: options.timeoutMs })] });
    const tracer = provider.getTracer(SCOPE, options.version);
    const run = tracer.startSpan(signals.run.name, { startTime: signals.run.start, attributes: signals.run.attributes });
    const parent = trace.setSpan(context.active(), run);
    const underTenant = new Map<string, ReturnType<typeof trace.setSpan>>();
    const tenantSpans = signals.tenants.map((tenant) => {
      const span = tracer.startSpan(tenant.name, { startTime: tenant.start, attributes: tenant.attributes }, parent);
      if (tenant.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: tenant.error });
      const name = tenant.attributes['contract_sync.tenant'];
      if (typeof name === 'string') underTenant.set(name, trace.setSpan(context.active(), span));
      return { span, end: tenant.end };
    });
    for (const request of signals.requests) {
      const within = (request.tenant === undefined ? undefined : underTenant.get(request.tenant)) ?? parent;
      const span = tracer.startSpan(request.name, { kind: SpanKind.CLIENT, startTime: request.start, attributes: request.attributes }, within);
      if (request.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: request.error });
      span.end(request.end);
    }
    for (const { span, end } of tenantSpans) span.end(end);
    if (signals.run.error !== undefined) run.setStatus({ code: SpanStatusCode.ERROR, message: signals.run.error });
    run.end(signals.run.end);
    work.push(provider.forceFlush().finally(() => provider.shutdown()));
  }
  if (targets.metrics !== undefined) {
    const exporter = watched(
      new OTLPMetricExporter({ url: targets.metrics.url, headers: { ...targets.metrics.headers }, timeoutMillis: options.timeoutMs }),
      `metrics to ${hostOf(targets.metrics.url)}`,
      problems,
    );
    // Exported once, at shutdown: a run is short, and one export carries all it counted.
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000, exportTimeoutMillis: options.timeoutMs });
    const provider = new MeterProvider({ resource, readers: [reader] });
    const meter = provider.getMeter(SCOPE, options.version);
    const definitions = Object.values(METRICS);
    function described(name: string): { unit: string; description: string } {
      const found = definitions.find((metric) => metric.name === name);
      return { unit: found?.unit ?? '1', description: found?.description ?? name };
    }
    for (const { name, value, attributes } of signals.counters) meter.createCounter(name, described(name)).add(value, attributes);
    for (const { name, value, attributes } of signals.histograms) meter.createHistogram(name, described(name)).record(value, attributes);
    for (const { name, value, attributes } of signals.gauges) meter.createGauge(name, described(name)).record(value, attributes);
    work.push(provider.shutdown());
  }
  const settled = await settle(Promise.allSettled(work), options.clock, options.timeoutMs + 1000);
  if (!settled) problems.push(`no answer within ${Math.round(options.timeoutMs / 1000)} s`);
  // In the order the exports ended: sorted, so that the same failure reads the same every run.
  return problems.sort();
}
