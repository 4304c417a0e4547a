/** otlpTargets: where OpenTelemetry's environment variables say to export, and nothing when they say nothing. */
import { describe, expect, it } from 'vitest';
import { otlpTargets } from '../../engine/telemetry/targets.ts';

describe('otlpTargets', () => {
  it.each([
    ['nothing set', {}],
    ['an empty endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }],
    ['the SDK disabled', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }],
    ['both exporters off', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' }],
  ])('exports nothing with %s', (_, env) => {
    expect(otlpTargets(env)).toBeUndefined();
  });

  it('adds the signal paths to the shared endpoint, takes per-signal endpoints as given, and reads headers and the service name', () => {
    const targets = otlpTargets({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.com:4318/',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'https://metrics.example.com/custom',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20throwaway,x-team=platform',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-team=metrics',
      OTEL_SERVICE_NAME: 'contract-sync-prod',
    });

    expect(targets).toEqual({
      serviceName: 'contract-sync-prod',
      traces: { url: 'https://collector.example.com:4318/v1/traces', headers: { authorization: 'Bearer throwaway', 'x-team': 'platform' } },
      metrics: { url: 'https://metrics.example.com/custom', headers: { authorization: 'Bearer throwaway', 'x-team': 'metrics' } },
    });
  });

  it('exports one signal when only its endpoint is set', () => {
    expect(otlpTargets({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toEqual({
      serviceName: 'contract-sync',
      traces: { url: 'http://127.0.0.1:4318/v1/traces', headers: {} },
    });
  });
});
