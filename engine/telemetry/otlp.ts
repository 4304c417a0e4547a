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
import type { OtlpTargets } from './targets.ts';

const SCOPE = 'contract-sync';

function settle(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  return Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    deadline,
  ]).finally(() => clearTimeout(timer));
}

export async function exportRunSignals(
  signals: RunSignals,
  targets: OtlpTargets,
  options: { readonly version: string; readonly timeoutMs: number },
): Promise<void> {
  const resource = resourceFromAttributes({ 'service.name': targets.serviceName, 'service.version': options.version });
  const work: Promise<unknown>[] = [];
  if (targets.traces !== undefined) {
    const exporter = new OTLPTraceExporter({ url: targets.traces.url, headers: { ...targets.traces.headers }, timeoutMillis: options.timeoutMs });
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
    const exporter = new OTLPMetricExporter({ url: targets.metrics.url, headers: { ...targets.metrics.headers }, timeoutMillis: options.timeoutMs });
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
  await settle(Promise.all(work), options.timeoutMs + 1000);
}
