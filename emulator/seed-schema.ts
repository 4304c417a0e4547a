/**
 * The JSON Schema of an emulator seed file. specs/emulator-seed.schema.json is this object written
 * out (`npm run specs`); test/emulator/seed.test.ts keeps the two equal.
 */
import {
  CONTRACT_ID_PATTERN,
  CONTRACT_ID_RULE,
  contractSchema,
  storedMemberSchema,
  SPEC_ID_BASE,
  TENANT_PATTERN,
  type JsonSchema,
} from '../engine/model/index.ts';

export const REALM_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
/** RFC 6749 scope-token characters, without the space that separates scopes. */
export const SCOPE_PATTERN = '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$';
const CLIENT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$';

export const SEED_DEFAULTS = {
  tokenTtlSeconds: 3600,
  rateLimit: { requestsPerSecond: 50, burst: 50 },
} as const;

export function seedSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${SPEC_ID_BASE}/emulator-seed.schema.json`,
    title: 'contract-sync emulator seed',
    description: 'Realm, tenants, OAuth clients and initial contracts of `contract-sync emulator --seed FILE`.',
    type: 'object',
    properties: {
      $schema: { type: 'string' },
      realm: { type: 'string', pattern: REALM_PATTERN, description: 'Served at /realms/{realm}.' },
      tokenTtlSeconds: {
        type: 'integer',
        minimum: 1,
        maximum: 86_400,
        default: SEED_DEFAULTS.tokenTtlSeconds,
        description: 'Life of an access token (its exp - iat).',
      },
      rateLimit: {
        type: 'object',
        description: 'Per-tenant token bucket for the CMS API; beyond it, 429 with Retry-After.',
        properties: {
          requestsPerSecond: { type: 'number', minimum: 0.001, maximum: 1_000_000 },
          burst: { type: 'integer', minimum: 1, maximum: 1_000_000 },
        },
        required: ['requestsPerSecond', 'burst'],
        additionalProperties: false,
        default: SEED_DEFAULTS.rateLimit,
      },
      behaviours: {
        type: 'object',
        description:
          'Optional behaviours a real service may have where the service publishes nothing (emulator/README.md). Each is off by default; contract-sync copes with each once configured for it.',
        properties: {
          readEnvelope: {
            type: 'string',
            pattern: '^[A-Za-z][A-Za-z0-9_]*$',
            description: 'GET answers {"<readEnvelope>": contract, "Links": {...}} instead of the bare contract (api.read.pointer: /<readEnvelope>).',
          },
          naiveTimestamps: {
            type: 'boolean',
            description: 'GET writes ValidFrom and ValidTo without an offset, e.g. 2027-01-01T00:00:00 (api.read.timestamps: utc).',
          },
          patchContentType: {
            type: 'string',
            pattern: '^[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+$',
            description: 'The only Content-Type a PATCH may have (default application/json); others are answered 415 (api.patch.contentType).',
          },
          conflictStatus: {
            type: 'integer',
            minimum: 400,
            maximum: 499,
            description: 'The status of an Add of a member already present or a Remove of an absent one (default 409; api.conflictStatuses).',
          },
        },
        additionalProperties: false,
      },
      tenants: {
        type: 'object',
        propertyNames: { pattern: TENANT_PATTERN },
        minProperties: 1,
        additionalProperties: { $ref: '#/$defs/Tenant' },
      },
    },
    required: ['realm', 'tenants'],
    additionalProperties: false,
    $defs: {
      Tenant: {
        type: 'object',
        properties: {
          clients: { type: 'array', items: { $ref: '#/$defs/Client' } },
          contracts: {
            type: 'object',
            propertyNames: { pattern: CONTRACT_ID_PATTERN, description: CONTRACT_ID_RULE },
            additionalProperties: { $ref: '#/$defs/Contract' },
          },
        },
        additionalProperties: false,
      },
      Client: {
        type: 'object',
        properties: {
          clientId: { type: 'string', pattern: CLIENT_ID_PATTERN },
          secret: { type: 'string', minLength: 1, description: 'Accepted with client_secret_basic and client_secret_post.' },
          previousSecret: { type: 'string', minLength: 1, description: 'Also accepted: the rotation overlap.' },
          scopes: {
            type: 'array',
            items: { type: 'string', pattern: SCOPE_PATTERN },
            description: 'Scopes this client may ask for, e.g. core:read, core:write.',
          },
        },
        required: ['clientId', 'secret', 'scopes'],
        additionalProperties: false,
      },
      // The service's data: a member needs its identity; a desired file's members are complete.
      Contract: { ...contractSchema(storedMemberSchema), description: 'A contract as the service holds it. Members need their identity fields only.' },
    },
  };
}
