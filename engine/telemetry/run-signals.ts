/**
 * What a finished run says to OpenTelemetry: its span and one span per tenant (with their
 * attributes), and the metrics it adds to, named as Argo CD and Flux name theirs so that their
 * dashboards carry over (`contract_sync_...`). Pure: the run's report in, plain data out; the SDK
 * adapter (otlp.ts) sends it. No attribute holds a secret, a token or a contract's value.
 */
import type { RunReport } from '../apply/run-report.ts';
import type { DriftReport } from '../drift/types.ts';
import type { RequestRecord } from './requests.ts';

export type RunKind = 'plan' | 'apply' | 'drift' | 'drift --fix';

/** How a run ended, as the metrics count it. */
export type RunResult = 'succeeded' | 'failed' | 'refused' | 'cancelled' | 'interrupted';

export interface SignalSpan {
  readonly name: string;
  /** A request's tenant: its span goes under that tenant's span (else under the run's). */
  readonly tenant?: string;
  /** ms since the epoch. */
  readonly start: number;
  readonly end: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly error?: string;
}

export interface RunSignals {
  readonly run: SignalSpan;
  readonly tenants: readonly SignalSpan[];
  /** One per read or PATCH, under its tenant's span, with HTTP semantic conventions' attributes. */
  readonly requests: readonly SignalSpan[];
  /** One labelled value per metric; counters are added to, gauges set. */
  readonly counters: readonly { readonly name: string; readonly value: number; readonly attributes: Readonly<Record<string, string>> }[];
  readonly histograms: readonly { readonly name: string; readonly value: number; readonly attributes: Readonly<Record<string, string>> }[];
  readonly gauges: readonly { readonly name: string; readonly value: number; readonly attributes: Readonly<Record<string, string>> }[];
}

/** The metrics a run adds to, with their units and descriptions (README lists them). */
export const METRICS = {
  runs: { name: 'contract_sync_runs_total', unit: '{run}', description: 'Runs by kind and result' },
  duration: { name: 'contract_sync_run_duration_seconds', unit: 's', description: 'How long a run took, by kind and result' },
  planned: { name: 'contract_sync_contracts_planned_total', unit: '{contract}', description: 'Contracts planned, by kind and tenant' },
  changed: { name: 'contract_sync_contracts_changed_total', unit: '{contract}', description: 'Contracts that needed a change, by kind and tenant' },
  applied: { name: 'contract_sync_contracts_applied_total', unit: '{contract}', description: 'Contracts changed on the service, by kind and tenant' },
  failed: { name: 'contract_sync_contracts_failed_total', unit: '{contract}', description: 'Contracts not applied, by kind and tenant' },
  ops: { name: 'contract_sync_ops_sent_total', unit: '{op}', description: 'Patch operations sent, by kind and tenant' },
  requests: { name: 'contract_sync_requests_total', unit: '{request}', description: 'Requests to the service, by kind and tenant' },
  throttled: {
    name: 'contract_sync_requests_throttled_total',
    unit: '{request}',
    description: 'Requests answered 429 or 503 with Retry-After, by kind and tenant',
  },
  requestDuration: {
    name: 'contract_sync_request_duration_seconds',
    unit: 's',
    description: 'How long a read or PATCH to the service took, by method and result',
  },
  drifted: { name: 'contract_sync_drifted_contracts', unit: '{contract}', description: 'Contracts drifted at the last drift run, by tenant' },
} as const;

export interface RunSignalInput {
  readonly kind: RunKind;
  readonly result: RunResult;
  /** The run report (apply, drift --fix: what was sent; drift: what was read). */
  readonly report: RunReport;
  readonly drift?: DriftReport;
  /** The run's reads and PATCHes (requests.ts). */
  readonly requests?: readonly RequestRecord[];
}

function requestSpan(record: RequestRecord): SignalSpan {
  return {
    name: `${record.method} ${record.template}`,
    ...(record.tenant === undefined ? {} : { tenant: record.tenant }),
    start: record.start,
    end: record.end,
    attributes: {
      'http.request.method': record.method,
      'url.template': record.template,
      'server.address': record.server,
      'server.port': record.port,
      ...(record.status === null ? {} : { 'http.response.status_code': record.status }),
      ...(record.errorType === undefined ? {} : { 'error.type': record.status === null ? record.errorType : String(record.status) }),
    },
    ...(record.errorType === undefined ? {} : { error: record.errorType }),
  };
}

/** Per tenant, its first request's start and its last request's end: where its work talked to the service. */
function requestWindows(requests: readonly RequestRecord[]): Map<string, { start: number; end: number }> {
  const window = new Map<string, { start: number; end: number }>();
  for (const record of requests) {
    if (record.tenant === undefined) continue;
    const seen = window.get(record.tenant);
    window.set(
      record.tenant,
      seen === undefined ? { start: record.start, end: record.end } : { start: Math.min(seen.start, record.start), end: Math.max(seen.end, record.end) },
    );
  }
  return window;
}

/** The request-duration histogram's points, one per request to the service. */
function requestDurations(requests: readonly RequestRecord[]): RunSignals['histograms'][number][] {
  return requests
    .filter((record) => record.to === undefined)
    .map((record) => ({
      name: METRICS.requestDuration.name,
      value: Math.max(0, record.end - record.start) / 1000,
      attributes: { method: record.method, result: record.errorType === undefined ? 'ok' : 'error' },
    }));
}

/** What every run's signals end with: its requests as spans, its duration and its requests' durations. */
function requestsAndDurations(
  kind: RunKind,
  result: RunResult,
  start: number,
  end: number,
  requests: readonly RequestRecord[],
): Pick<RunSignals, 'requests' | 'histograms'> {
  return {
    requests: requests.map(requestSpan),
    histograms: [{ name: METRICS.duration.name, value: Math.max(0, end - start) / 1000, attributes: { kind, result } }, ...requestDurations(requests)],
  };
}

export function runSignals(input: RunSignalInput): RunSignals {
  const { kind, result, report } = input;
  const start = Date.parse(report.startedAt);
  const end = Date.parse(report.finishedAt);
  const sends = !report.dryRun && kind !== 'drift';
  const drifted = new Map((input.drift?.tenants ?? []).map((tenant) => [tenant.tenant, tenant]));
  const window = requestWindows(input.requests ?? []);

  const counters: RunSignals['counters'][number][] = [{ name: METRICS.runs.name, value: 1, attributes: { kind, result } }];
  const gauges: RunSignals['gauges'][number][] = [];
  const tenants = report.tenants.map((tenant): SignalSpan => {
    const attributes = { kind, tenant: tenant.tenant };
    counters.push(
      { name: METRICS.planned.name, value: tenant.contracts, attributes },
      { name: METRICS.changed.name, value: tenant.changed, attributes },
      { name: METRICS.requests.name, value: tenant.requests, attributes },
      { name: METRICS.throttled.name, value: tenant.throttles, attributes },
    );
    if (sends) {
      counters.push(
        { name: METRICS.applied.name, value: tenant.applied, attributes },
        { name: METRICS.failed.name, value: tenant.failures.length, attributes },
        { name: METRICS.ops.name, value: tenant.ops, attributes },
      );
    }
    const drift = drifted.get(tenant.tenant);
    if (drift !== undefined && drift.error === undefined)
      gauges.push({ name: METRICS.drifted.name, value: drift.contracts.length, attributes: { tenant: tenant.tenant } });
    return {
      name: `contract-sync ${kind} tenant`,
      start: window.get(tenant.tenant)?.start ?? start,
      end: window.get(tenant.tenant)?.end ?? end,
      attributes: {
        'contract_sync.tenant': tenant.tenant,
        'contract_sync.contracts': tenant.contracts,
        'contract_sync.changed': tenant.changed,
        'contract_sync.applied': sends ? tenant.applied : 0,
        'contract_sync.failed': tenant.failures.length,
        'contract_sync.requests': tenant.requests,
        'contract_sync.retries': tenant.retries,
        'contract_sync.throttled': tenant.throttles,
        ...(drift === undefined ? {} : { 'contract_sync.drifted': drift.contracts.length }),
      },
      ...(tenant.error === undefined ? {} : { error: tenant.error }),
    };
  });
  return {
    run: {
      name: `contract-sync ${kind}`,
      start,
      end,
      attributes: {
        'contract_sync.run_id': report.runId,
        'contract_sync.kind': kind,
        'contract_sync.result': result,
        'contract_sync.tenants': report.summary.tenants,
        'contract_sync.changed': report.summary.changed,
        'contract_sync.ops': report.summary.ops,
        'contract_sync.requests': report.summary.requests,
        ...(report.source.commit === null ? {} : { 'vcs.ref.head.revision': report.source.commit }),
      },
      ...(result === 'failed' ? { error: `${report.summary.failed} contracts not applied` } : {}),
    },
    tenants,
    ...requestsAndDurations(kind, result, start, end, input.requests ?? []),
    counters,
    gauges,
  };
}

/** What a finished plan says to OpenTelemetry: its span (and, for a plan document, one per tenant), and the metrics it adds to. */
export interface PlanSignalInput {
  readonly runId?: string;
  readonly start: number;
  readonly end: number;
  readonly commit: string | null;
  readonly summary: { readonly tenants: number; readonly contracts: number; readonly changed: number; readonly ops: number };
  /** Per tenant, for a plan held whole (a plan written tenant by tenant keeps only its summary). */
  readonly tenants?: readonly { readonly tenant: string; readonly contracts: number; readonly changed: number }[];
  /** The reads of a plan against live reads (`--refresh`). */
  readonly requests?: readonly RequestRecord[];
}

export function planSignals(input: PlanSignalInput): RunSignals {
  const kind = 'plan';
  const result = 'succeeded';
  const { start, end } = input;
  const window = requestWindows(input.requests ?? []);
  const counters: RunSignals['counters'][number][] = [{ name: METRICS.runs.name, value: 1, attributes: { kind, result } }];
  const tenants = (input.tenants ?? []).map((tenant): SignalSpan => {
    const attributes = { kind, tenant: tenant.tenant };
    counters.push({ name: METRICS.planned.name, value: tenant.contracts, attributes }, { name: METRICS.changed.name, value: tenant.changed, attributes });
    return {
      name: 'contract-sync plan tenant',
      start: window.get(tenant.tenant)?.start ?? start,
      end: window.get(tenant.tenant)?.end ?? end,
      attributes: { 'contract_sync.tenant': tenant.tenant, 'contract_sync.contracts': tenant.contracts, 'contract_sync.changed': tenant.changed },
    };
  });
  return {
    run: {
      name: 'contract-sync plan',
      start,
      end,
      attributes: {
        ...(input.runId === undefined ? {} : { 'contract_sync.run_id': input.runId }),
        'contract_sync.kind': kind,
        'contract_sync.result': result,
        'contract_sync.tenants': input.summary.tenants,
        'contract_sync.contracts': input.summary.contracts,
        'contract_sync.changed': input.summary.changed,
        'contract_sync.ops': input.summary.ops,
        ...(input.commit === null ? {} : { 'vcs.ref.head.revision': input.commit }),
      },
    },
    tenants,
    ...requestsAndDurations(kind, result, start, end, input.requests ?? []),
    counters,
    gauges: [],
  };
}
