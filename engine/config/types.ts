import type { CollectionFieldName } from '../model/fields.ts';

/** A secret is named, never written: an environment variable or a file. */
export type SecretRef = { readonly env: string } | { readonly file: string };

export type CollectionMode = 'authoritative' | 'additive';

export interface TenantConfig {
  readonly clientId: string;
  readonly clientSecret: SecretRef;
  readonly previousClientSecret?: SecretRef;
  /** `YYYY-MM-DD` */
  readonly secretRotatedAt?: string;
  /** Globs (repository-relative) of the only files allowed to declare this tenant. */
  readonly paths?: readonly string[];
  /** The service's id of the tenant, which the token's `tenant_id` must equal (compared as strings); default: the config key. */
  readonly tenantId?: string;
}

export interface AuthConfig {
  readonly url: string;
  readonly realm: string;
  /** Named explicitly: discovery is skipped, and the endpoint may lie outside the origin of `url`. */
  readonly tokenEndpoint?: string;
  /** Per identity-provider request (discovery, token), the whole answer included. */
  readonly timeoutMs: number;
}

export type StateConfig =
  | { readonly backend: 'file'; readonly path: string }
  | {
      readonly backend: 'postgres';
      /** postgresql://USER:PASSWORD@HOST:PORT/DATABASE: a secret, as it holds the password. */
      readonly url: SecretRef;
      /** The PostgreSQL schema holding contract-sync's tables (default contract_sync). */
      readonly schema?: string;
    };

/** How a read's timestamp without an offset is read: refused (`error`) or taken as UTC. */
export type NaiveTimestamps = 'utc' | 'error';

/** `api.read`: the unpublished read, with what it may look like (docs/architecture.md section 1). */
export interface ReadConfig {
  readonly path: string;
  /** RFC 6901 pointer to the contract object in the answer; '' is the whole body. */
  readonly pointer: string;
  readonly timestamps: NaiveTimestamps;
}

/** RFC 6901 pointers inside one audit event: where its actor, time, changed fields (and id, contract id) are. */
export interface AuditFieldPointers {
  readonly actor: string;
  readonly time: string;
  /** The changed fields: a list of field names (or op paths, `/Contract/<Field>`). */
  readonly contractFields: string;
  /** Optional: the event's id, shown with an attribution. */
  readonly id?: string;
  /** Optional: the contract an event is about; events of another contract in the answer are ignored. */
  readonly contractId?: string;
}

/**
 * `api.audit`: the service's audit events, read with `audit:read` (docs/architecture.md section 5).
 * Their shape is unpublished, so the path and every pointer are configured, as `api.read` is.
 */
export interface AuditConfig {
  /** e.g. `/audit/events?contractId={id}`; the id is percent-encoded. */
  readonly path: string;
  /** RFC 6901 pointer to the list of events in the answer; '' is the whole body. */
  readonly pointer: string;
  readonly fields: AuditFieldPointers;
}

export interface ApiConfig {
  readonly baseUrl: string;
  readonly read?: ReadConfig;
  readonly audit?: AuditConfig;
  readonly patch: { readonly contentType: string };
  /** Answers to an Add/Remove patch settled by a read and one re-plan, as 409 is by default. */
  readonly conflictStatuses: readonly number[];
  readonly timeoutMs: number;
}

/** The events a notification channel may subscribe to (docs/architecture.md section 5). */
export const NOTIFY_EVENTS = ['drift', 'drift-resolved', 'apply', 'apply-failed', 'policy-denied'] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

export const NOTIFY_KINDS = ['slack', 'teams', 'webhook'] as const;
export type NotifyKind = (typeof NOTIFY_KINDS)[number];

/** One entry of `notify:`: where messages go, for which events and tenants. */
export interface NotifyChannel {
  /** Unique among the channels; how messages, warnings and `notify test --channel` name it. */
  readonly name: string;
  readonly kind: NotifyKind;
  /**
   * A Slack or Teams webhook URL is a secret (whoever holds it can post): always a reference. A
   * generic webhook's URL may be written (https://, or http:// to a loopback host).
   */
  readonly url: string | SecretRef;
  /** `webhook` only, and required there: the HMAC-SHA256 key of X-Contract-Sync-Signature. */
  readonly secret?: SecretRef;
  readonly on: readonly NotifyEvent[];
  /** Only these tenants' events; absent: every tenant. */
  readonly tenants?: readonly string[];
}

/** The engine config with every default applied. */
export interface Config {
  readonly api: ApiConfig;
  readonly auth: AuthConfig;
  readonly tenants: Readonly<Record<string, TenantConfig>>;
  readonly desired: { readonly paths: readonly string[] };
  readonly collections: Readonly<Record<CollectionFieldName, CollectionMode>>;
  readonly rate: { readonly requestsPerSecond: number; readonly concurrency: number; readonly maxInFlight: number };
  readonly retry: { readonly maxAttempts: number };
  readonly state: StateConfig;
  readonly safety: SafetyConfig;
  /** Present only when configured. */
  readonly notify?: readonly NotifyChannel[];
  /** Present only when the file has `policies:` (compiled by engine/policy/compile.ts once the config is read). */
  readonly policies?: readonly PolicyConfig[];
  readonly policyExceptions?: readonly PolicyExceptionConfig[];
}

/** A 1-based position in the config file. */
export interface SourceAt {
  readonly line: number;
  readonly column: number;
}

/**
 * A CEL expression as written in the config, with where each of its lines starts in the file, so
 * that a problem at an offset inside it is reported at its line and column. `exact` is false when
 * escapes or folding make the text differ from the file's (offsets then point at the scalar's start).
 */
export interface ExpressionSource {
  readonly text: string;
  readonly lines: readonly SourceAt[];
  readonly exact: boolean;
}

export type PolicyOn = 'contract' | 'change';

/** One rule of `policies:` (docs/policies.md), as written; the CEL is compiled in engine/policy/. */
export interface PolicyConfig {
  readonly name: string;
  /** The position of its name. */
  readonly at: SourceAt;
  readonly on: PolicyOn;
  readonly matchConditions: readonly { readonly name: string; readonly expression: ExpressionSource }[];
  readonly variables: readonly { readonly name: string; readonly expression: ExpressionSource }[];
  readonly validations: readonly {
    readonly expression: ExpressionSource;
    readonly message?: string;
    readonly messageExpression?: ExpressionSource;
  }[];
  readonly action: 'deny' | 'warn' | 'override';
}

/** One entry of `policyExceptions:`: a rule lifted for some contracts until a date. */
export interface PolicyExceptionConfig {
  readonly policy: string;
  /** `TENANT/ID`, as --target takes them. */
  readonly contracts: readonly string[];
  readonly owner: string;
  readonly reason: string;
  readonly ticket?: string;
  /** `YYYY-MM-DD` (UTC): from that day on the exception is void. */
  readonly expires: string;
  readonly at: SourceAt;
}

/** Guards of apply and drift --fix (engine/plan/removal-guard.ts). */
export interface SafetyConfig {
  /** A tenant whose plan removes more collection members than this is refused. */
  readonly maxRemovals: number;
}

export const DEFAULTS = {
  desiredPaths: ['contracts/**/*.yaml'],
  collectionMode: 'authoritative',
  rate: { requestsPerSecond: 5, concurrency: 2, maxInFlight: 16 },
  retry: { maxAttempts: 5 },
  state: { backend: 'file', path: '.contract-sync/state' },
  timeoutMs: 30_000,
  authTimeoutMs: 10_000,
  safety: { maxRemovals: 25 },
  readPointer: '',
  auditPointer: '',
  readTimestamps: 'error',
  patchContentType: 'application/json',
  conflictStatuses: [409],
} as const;
