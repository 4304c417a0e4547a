/** The engine config schema; specs/config.schema.json is this object written out. */
import { COLLECTION_FIELDS } from '../model/fields.ts';
import type { JsonSchema } from '../model/json-schema-type.ts';
import { SPEC_ID_BASE, TENANT_PATTERN } from '../model/json-schemas.ts';
import { NOTIFY_EVENTS, NOTIFY_KINDS } from './types.ts';

const secretRef: JsonSchema = {
  description: 'Where a secret comes from. Secrets are never written in this file.',
  oneOf: [
    {
      type: 'object',
      properties: { env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'An environment variable' } },
      required: ['env'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: { file: { type: 'string', minLength: 1, description: 'A file holding only the secret' } },
      required: ['file'],
      additionalProperties: false,
    },
  ],
};

const url: JsonSchema = { type: 'string', format: 'uri' };
const POINTER_PATTERN = '^(/([^~]|~[01])*)*$';
function pointerIn(what: string): JsonSchema {
  return { type: 'string', pattern: POINTER_PATTERN, description: `RFC 6901 JSON Pointer to ${what}.` };
}
const positiveInteger: JsonSchema = { type: 'integer', minimum: 1, maximum: 1_000_000 };
const globs: JsonSchema = { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 };
const collectionMode: JsonSchema = { enum: ['authoritative', 'additive'] };

/** A CEL expression: bounded in length, so that one rule cannot make a run parse or walk without end. */
export const MAX_EXPRESSION_LENGTH = 4096;
function celExpression(description: string): JsonSchema {
  return { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_LENGTH, description };
}
const celName: JsonSchema = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' };

const policy: JsonSchema = {
  type: 'object',
  description: 'A rule in CEL (Common Expression Language), checked at validate, plan, apply and drift.',
  properties: {
    name: {
      type: 'string',
      pattern: '^[a-z0-9-]+$',
      maxLength: 100,
      description: 'Unique; lower-case letters, digits and dashes. Findings, exceptions and --override-policy name it.',
    },
    on: {
      enum: ['contract', 'change'],
      description: 'contract: every desired contract (variables tenant, id, object). change: every planned contract with ops (also oldObject, knownFrom, ops).',
    },
    matchConditions: {
      type: 'array',
      description: 'Optional: the rule applies only to contracts for which every condition is true.',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$', description: 'Names the condition in messages.' },
          expression: celExpression('CEL giving a bool.'),
        },
        required: ['name', 'expression'],
        additionalProperties: false,
      },
    },
    variables: {
      type: 'array',
      description: 'Optional: evaluated in order; read in later expressions as variables.NAME.',
      items: {
        type: 'object',
        properties: { name: { ...celName, description: 'Read as variables.NAME.' }, expression: celExpression('CEL giving any value.') },
        required: ['name', 'expression'],
        additionalProperties: false,
      },
    },
    validations: {
      type: 'array',
      minItems: 1,
      description: 'Every expression must be true; each false one is a finding.',
      items: {
        type: 'object',
        properties: {
          expression: celExpression('CEL giving a bool: true means the contract passes.'),
          message: { type: 'string', minLength: 1, description: 'Shown when the expression is false.' },
          messageExpression: celExpression('Optional: CEL giving the message as a string; when it fails, message is shown, saying so.'),
        },
        required: ['expression'],
        additionalProperties: false,
      },
    },
    action: {
      enum: ['deny', 'warn', 'override'],
      description: 'deny: the run fails. warn: shown only. override: a deny that apply --override-policy NAME --reason TEXT lifts for one run.',
    },
  },
  required: ['name', 'on', 'validations', 'action'],
  additionalProperties: false,
};

const policyException: JsonSchema = {
  type: 'object',
  description: 'Lifts one rule for some contracts until a date; a finding it matches is shown as excepted, not failing.',
  properties: {
    policy: { type: 'string', description: 'The name of a rule in policies.' },
    contracts: {
      type: 'array',
      minItems: 1,
      items: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}/.+$', description: 'TENANT/ID, as --target takes them.' },
    },
    owner: { type: 'string', minLength: 1, description: 'Who answers for the exception, e.g. an e-mail address.' },
    reason: { type: 'string', minLength: 1 },
    ticket: { type: 'string', minLength: 1, description: 'Optional: the ticket tracking it.' },
    expires: {
      type: 'string',
      format: 'date',
      description: 'Required, YYYY-MM-DD (UTC): from that day on the exception is void and the finding counts again.',
    },
  },
  required: ['policy', 'contracts', 'owner', 'reason', 'expires'],
  additionalProperties: false,
};

export function configSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${SPEC_ID_BASE}/config.schema.json`,
    title: 'contract-sync engine config (contract-sync.yaml)',
    type: 'object',
    properties: {
      api: {
        type: 'object',
        description: 'The Contract Management Service Core API.',
        properties: {
          baseUrl: { ...url, description: 'PATCH goes to {baseUrl}/contract/:ContractId. http:// only for loopback hosts.' },
          read: {
            type: 'object',
            description: 'Optional: a live read of one contract. Enables --refresh, drift and import.',
            properties: {
              path: { type: 'string', pattern: '^/.*\\{id\\}', description: 'e.g. /contract/{id}; the id is percent-encoded.' },
              pointer: {
                type: 'string',
                pattern: '^(/([^~]|~[01])*)*$',
                description: 'RFC 6901 JSON Pointer to the contract object inside the answer, e.g. /Contract (default "": the whole body).',
              },
              timestamps: {
                enum: ['utc', 'error'],
                description: 'A read timestamp without an offset (2027-01-01T00:00:00): error (default) fails the contract naming it; utc reads it as UTC.',
              },
            },
            required: ['path'],
            additionalProperties: false,
          },
          audit: {
            type: 'object',
            description:
              "Optional: the service's audit events, read with the scope audit:read. drift then names who changed each drifted field and when, or says unattributed. Their shape is unpublished: the path and the pointers are configured.",
            properties: {
              path: {
                type: 'string',
                pattern: '^/.*\\{id\\}',
                description: 'GET {baseUrl}{path}, e.g. "/audit/events?contractId={id}"; the id is percent-encoded.',
              },
              pointer: pointerIn('the list of events in the answer, e.g. /events (default "": the whole body)'),
              fields: {
                type: 'object',
                description: 'RFC 6901 JSON Pointers inside one event.',
                properties: {
                  actor: pointerIn('who made the change, e.g. /actor'),
                  time: pointerIn('when, an RFC 3339 timestamp with an offset, e.g. /time'),
                  contractFields: pointerIn('the list of changed fields (names, or op paths /Contract/<Field>), e.g. /fields'),
                  id: pointerIn("the event's id, shown with an attribution (optional), e.g. /id"),
                  contractId: pointerIn('the contract the event is about (optional): events of other contracts in the answer are ignored'),
                },
                required: ['actor', 'time', 'contractFields'],
                additionalProperties: false,
              },
            },
            required: ['path', 'fields'],
            additionalProperties: false,
          },
          patch: {
            type: 'object',
            description: 'How the PATCH body is sent.',
            properties: {
              contentType: {
                type: 'string',
                pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\\s*;.*)?$',
                description: 'Content-Type of the PATCH body (default application/json), e.g. application/json-patch+json.',
              },
            },
            additionalProperties: false,
          },
          conflictStatuses: {
            type: 'array',
            items: { type: 'integer', minimum: 400, maximum: 499 },
            minItems: 1,
            description:
              'Answers to an Add/Remove patch that mean "the service holds other members than contract-sync knew" (default [409]); each is settled by a read and one re-plan.',
          },
          timeoutMs: { ...positiveInteger, description: 'Per-request timeout (default 30000).' },
        },
        required: ['baseUrl'],
        additionalProperties: false,
      },
      auth: {
        type: 'object',
        description: 'The OpenID Connect provider issuing client-credentials tokens.',
        properties: {
          url: { ...url, description: 'Discovery at {url}/realms/{realm}/.well-known/openid-configuration.' },
          realm: { type: 'string', pattern: '^[A-Za-z0-9._-]+$' },
          tokenEndpoint: {
            ...url,
            description: 'Optional: the token endpoint, named explicitly. Skips discovery and may lie outside the origin of url; a discovered one may not.',
          },
          timeoutMs: { ...positiveInteger, description: 'Per identity-provider request, discovery and token (default 10000); each is tried at most 3 times.' },
        },
        required: ['url', 'realm'],
        additionalProperties: false,
      },
      tenants: {
        type: 'object',
        description: 'One OAuth client per tenant; tokens are never shared between tenants.',
        propertyNames: { pattern: TENANT_PATTERN },
        minProperties: 1,
        additionalProperties: {
          type: 'object',
          properties: {
            clientId: { type: 'string', minLength: 1 },
            clientSecret: secretRef,
            previousClientSecret: { ...secretRef, description: 'Optional: tried once on invalid_client during rotation.' },
            secretRotatedAt: { type: 'string', format: 'date', description: 'Warns when older than 12 months.' },
            paths: { ...globs, description: 'Optional: the only desired-state files allowed to name this tenant.' },
            tenantId: {
              description: "Optional: the service's id of this tenant, which the token's tenant_id must equal (compared as text). Default: the key.",
              oneOf: [
                { type: 'string', minLength: 1 },
                { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
              ],
            },
          },
          required: ['clientId', 'clientSecret'],
          additionalProperties: false,
        },
      },
      desired: {
        type: 'object',
        properties: { paths: { ...globs, description: 'Desired-state files (default contracts/**/*.yaml).' } },
        additionalProperties: false,
      },
      collections: {
        description: 'authoritative (default): remove members not in git. additive: never remove.',
        oneOf: [
          collectionMode,
          {
            type: 'object',
            properties: Object.fromEntries(COLLECTION_FIELDS.map((field) => [field.name, collectionMode])),
            additionalProperties: false,
          },
        ],
      },
      rate: {
        type: 'object',
        properties: {
          requestsPerSecond: { type: 'number', minimum: 0.01, maximum: 10_000, description: 'Per tenant (default 5).' },
          concurrency: { ...positiveInteger, description: 'Requests in flight per tenant (default 2).' },
          maxInFlight: { ...positiveInteger, description: 'Requests in flight across tenants (default 16).' },
        },
        additionalProperties: false,
      },
      retry: {
        type: 'object',
        properties: { maxAttempts: { ...positiveInteger, description: 'Attempts per request (default 5).' } },
        additionalProperties: false,
      },
      safety: {
        type: 'object',
        description: 'Guards of apply and drift --fix.',
        properties: {
          maxRemovals: {
            type: 'integer',
            minimum: 0,
            maximum: 1_000_000,
            description:
              'A run refuses a tenant whose plan removes more collection members than this (default 25); --max-removals N overrides it, --allow-removals lifts the guard for one run.',
          },
        },
        additionalProperties: false,
      },
      notify: {
        type: 'array',
        description: 'Where contract-sync says what happened: Slack, Microsoft Teams (a Workflows webhook), or a signed JSON webhook.',
        items: { $ref: '#/$defs/NotifyChannel' },
      },
      policies: {
        type: 'array',
        description: 'Rules an organisation enforces on what may be merged and applied, in CEL (docs/policies.md).',
        items: policy,
      },
      policyExceptions: {
        type: 'array',
        description: 'Exceptions to policies: an owner, a reason, an optional ticket and a required expiry date.',
        items: policyException,
      },
      state: {
        oneOf: [
          {
            type: 'object',
            properties: { backend: { const: 'file' }, path: { type: 'string', minLength: 1 } },
            required: ['backend'],
            additionalProperties: false,
          },
          {
            type: 'object',
            properties: {
              backend: { const: 'postgres' },
              url: { ...secretRef, description: 'postgresql://USER:PASSWORD@HOST:PORT/DATABASE, as a secret reference: it holds a password.' },
              schema: {
                type: 'string',
                pattern: '^[a-z_][a-z0-9_]{0,62}$',
                description: 'The PostgreSQL schema holding the tables, created at first use (default contract_sync).',
              },
            },
            required: ['backend', 'url'],
            additionalProperties: false,
          },
        ],
      },
    },
    required: ['api', 'auth', 'tenants'],
    additionalProperties: false,
    $defs: { NotifyChannel: notifyChannel() },
  };
}

function notifyChannel(): JsonSchema {
  // Which kind takes which url and secret is checked in ./notify.ts: the schema subset has no if/then.
  return {
    type: 'object',
    properties: {
      name: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'Unique; names the channel in warnings and in `notify test --channel NAME`.' },
      kind: {
        enum: [...NOTIFY_KINDS],
        description: 'slack: an incoming webhook; teams: a Workflows webhook taking an Adaptive Card; webhook: a signed JSON body.',
      },
      url: {
        description:
          'Where messages are posted. A Slack or Teams webhook URL is a secret: { env } or { file } only. A webhook URL may also be written: https://, or http:// to a loopback host.',
        oneOf: [{ ...url }, secretRef],
      },
      secret: { ...secretRef, description: 'webhook only, and required there: the key of X-Contract-Sync-Signature: sha256=<hex HMAC-SHA256 of the body>.' },
      on: {
        type: 'array',
        items: { enum: [...NOTIFY_EVENTS] },
        minItems: 1,
        description: 'The events sent to this channel: drift (once per new drift), drift-resolved, apply, apply-failed, policy-denied.',
      },
      tenants: { type: 'array', items: { type: 'string', pattern: TENANT_PATTERN }, minItems: 1, description: 'Only these tenants (default: every tenant).' },
    },
    required: ['name', 'kind', 'url', 'on'],
    additionalProperties: false,
  };
}
