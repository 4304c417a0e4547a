/**
 * Where a run's traces and metrics go, from OpenTelemetry's environment variables
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, the per-signal `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and
 * `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`,
 * `OTEL_SDK_DISABLED`). Pure: the environment is passed in. Undefined when nothing is to be exported:
 * then the SDK is never loaded.
 */

type Env = Readonly<Record<string, string | undefined>>;

export interface OtlpTarget {
  readonly url: string;
  /** From OTEL_EXPORTER_OTLP_HEADERS (and the per-signal variable): may hold a credential, never logged. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface OtlpTargets {
  readonly serviceName: string;
  readonly traces?: OtlpTarget;
  readonly metrics?: OtlpTarget;
}

/** `key=value,key2=value2`, values percent-decoded (the OTLP exporter specification's format). */
function headersOf(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // A malformed escape: the header is left out rather than sent garbled.
    }
  }
  return headers;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function target(env: Env, signal: 'TRACES' | 'METRICS', path: string): OtlpTarget | undefined {
  const own = nonEmpty(env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]);
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  // The per-signal endpoint is used as given; the shared one gets the signal's path (the specification's rule).
  const url = own ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/${path}`);
  if (url === undefined) return undefined;
  return { url, headers: { ...headersOf(env.OTEL_EXPORTER_OTLP_HEADERS), ...headersOf(env[`OTEL_EXPORTER_OTLP_${signal}_HEADERS`]) } };
}

export function otlpTargets(env: Env): OtlpTargets | undefined {
  if (nonEmpty(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return undefined;
  const traces = nonEmpty(env.OTEL_TRACES_EXPORTER) === 'none' ? undefined : target(env, 'TRACES', 'v1/traces');
  const metrics = nonEmpty(env.OTEL_METRICS_EXPORTER) === 'none' ? undefined : target(env, 'METRICS', 'v1/metrics');
  if (traces === undefined && metrics === undefined) return undefined;
  return { serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? 'contract-sync', ...(traces ? { traces } : {}), ...(metrics ? { metrics } : {}) };
}
