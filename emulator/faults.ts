/**
 * Fault injection (docs/architecture.md section 6): per request, by probability, per endpoint (api, token),
 * reproducible from the fault body's `seed`.
 */
import { compileSchema, type JsonSchema, type SchemaCheck } from '../engine/model/index.ts';
import { seededRandom, type Random } from './prng.ts';

export const FAULT_STATUSES = ['429', '500', '502', '503'] as const;
export type FaultEndpoint = 'api' | 'token';

export interface EndpointFaults {
  readonly status?: Readonly<Partial<Record<(typeof FAULT_STATUSES)[number], number>>>;
  readonly retryAfterSeconds?: number;
  readonly latencyMs?: readonly [number, number];
  readonly resetBefore?: number;
  readonly resetAfter?: number;
}

export interface FaultConfig {
  readonly seed?: number;
  readonly api?: EndpointFaults;
  readonly token?: EndpointFaults;
}

/** What was done to one request; `null` in the request log when nothing was. */
export interface InjectedFault {
  readonly type: 'status' | 'resetBefore' | 'resetAfter' | 'latency';
  readonly status?: number;
  readonly latencyMs?: number;
  readonly retryAfterSeconds?: number;
}

const probability = { type: 'number', minimum: 0, maximum: 1 } as const;

export function faultSchema(): JsonSchema {
  const endpoint: JsonSchema = {
    type: 'object',
    properties: {
      status: {
        type: 'object',
        propertyNames: { enum: FAULT_STATUSES },
        additionalProperties: probability,
        description: 'Probability of answering with this status instead of handling the request.',
      },
      retryAfterSeconds: { type: 'integer', minimum: 0, maximum: 86_400, description: 'Retry-After sent with injected 429 and 503.' },
      latencyMs: {
        type: 'array',
        items: { type: 'integer', minimum: 0, maximum: 60_000 },
        minItems: 2,
        maxItems: 2,
        description: '[min, max]: every request waits a uniform random time in this range first.',
      },
      resetBefore: { ...probability, description: 'Probability of dropping the connection without handling the request.' },
      resetAfter: { ...probability, description: 'Probability of handling (and committing) the request, then dropping the connection unanswered.' },
    },
    additionalProperties: false,
  };
  return {
    title: 'Body of POST /__admin/faults',
    type: 'object',
    properties: {
      seed: { type: 'integer', minimum: 0, maximum: 4_294_967_295, description: 'Seed of the fault PRNG (default 0).' },
      api: endpoint,
      token: endpoint,
    },
    additionalProperties: false,
  };
}

let faultCheck: SchemaCheck | undefined;

/** Every problem of a fault body, as `path: message` strings; empty when it is valid. */
export function validateFaults(value: unknown): string[] {
  faultCheck ??= compileSchema(faultSchema());
  const problems = faultCheck(value).map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  if (problems.length > 0) return problems;
  const config = value as FaultConfig;
  for (const name of ['api', 'token'] as const) {
    const faults = config[name];
    if (!faults) continue;
    const total = Object.values(faults.status ?? {}).reduce((sum, p) => sum + p, 0) + (faults.resetBefore ?? 0) + (faults.resetAfter ?? 0);
    if (total > 1 + 1e-9) problems.push(`${name}: the probabilities of status, resetBefore and resetAfter add up to ${total}, more than 1`);
    const [min, max] = faults.latencyMs ?? [0, 0];
    if (min > max) problems.push(`${name}.latencyMs: expected [min, max] with min <= max, got [${min}, ${max}]`);
  }
  return problems;
}

/** Decides each request's fault; one PRNG per endpoint, so token traffic does not shift API faults. */
export class FaultInjector {
  readonly config: FaultConfig;
  readonly #random: Record<FaultEndpoint, Random>;

  constructor(config: FaultConfig) {
    this.config = config;
    const seed = config.seed ?? 0;
    this.#random = { api: seededRandom(seed), token: seededRandom(seed ^ 0x9e3779b9) };
  }

  /** The fault for the next request to `endpoint`, or null. Draws exactly two numbers per call. */
  next(endpoint: FaultEndpoint): InjectedFault | null {
    const faults = this.config[endpoint];
    const random = this.#random[endpoint];
    const outcome = random();
    const spread = random();
    if (!faults) return null;
    const [min, max] = faults.latencyMs ?? [0, 0];
    const latencyMs = min + Math.floor(spread * (max - min + 1));
    const latency = latencyMs > 0 ? { latencyMs } : {};
    // Outcomes partition [0, 1): statuses in ascending order, then resetBefore, then resetAfter.
    let edge = 0;
    for (const status of FAULT_STATUSES) {
      edge += faults.status?.[status] ?? 0;
      if (outcome < edge) {
        const retryAfter =
          (status === '429' || status === '503') && faults.retryAfterSeconds !== undefined ? { retryAfterSeconds: faults.retryAfterSeconds } : {};
        return { type: 'status', status: Number(status), ...latency, ...retryAfter };
      }
    }
    edge += faults.resetBefore ?? 0;
    if (outcome < edge) return { type: 'resetBefore', ...latency };
    edge += faults.resetAfter ?? 0;
    if (outcome < edge) return { type: 'resetAfter', ...latency };
    return latencyMs > 0 ? { type: 'latency', latencyMs } : null;
  }
}
