/** The JSON Schema of the plan document, derived from the field table and the op shapes (specs/plan.schema.json). */
import { COLLECTION_FIELDS, FIELD_NAMES } from '../model/fields.ts';
import type { JsonSchema } from '../model/json-schema-type.ts';
import { CONTRACT_ID_PATTERN, opShapes, SPEC_ID_BASE, TENANT_PATTERN } from '../model/json-schemas.ts';
import { PLAN_VERSION } from './types.ts';

const COUNT = { type: 'integer', minimum: 0 } as const;
const NULLABLE_STRING = { type: ['string', 'null'] } as const;
const COMMIT = { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' } as const;

/** What a finding says of itself (the plan's Finding adds where it is: tenant, contract, file, line). */
const FINDING_OWN = {
  check: { type: 'string', minLength: 1, description: 'The check that found it: a built-in check or a policy rule.' },
  action: { enum: ['deny', 'warn', 'override'], description: 'deny refuses; warn is shown only; override is a deny an apply may lift.' },
  message: { type: 'string' },
  exception: {
    type: 'object',
    description: 'A policy exception that matches it: excepted (shown, not failing) until it expires, then expired (the finding counts).',
    properties: {
      state: { enum: ['excepted', 'expired'] },
      owner: { type: 'string' },
      reason: { type: 'string' },
      ticket: { type: 'string' },
      expires: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
    },
    required: ['state', 'owner', 'reason', 'expires'],
    additionalProperties: false,
  },
  overridden: {
    type: 'object',
    description: 'An override finding lifted for the run (--override-policy NAME --reason TEXT): why, and who ran it.',
    properties: { reason: { type: 'string' }, by: { type: 'string' } },
    required: ['reason', 'by'],
    additionalProperties: false,
  },
} as const satisfies Record<string, JsonSchema>;

export function planSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${SPEC_ID_BASE}/plan.schema.json`,
    title: 'contract-sync plan',
    description: 'What `contract-sync plan` computed and `contract-sync apply PLAN.json` sends: one PATCH body per changed contract.',
    type: 'object',
    properties: {
      version: { const: PLAN_VERSION, description: 'Readers refuse versions they do not know.' },
      createdAt: { type: 'string', format: 'date-time' },
      source: {
        type: 'object',
        properties: {
          repo: { type: 'string' },
          ref: { ...NULLABLE_STRING, description: 'The git ref the desired state was read at; null for the working tree.' },
          commit: NULLABLE_STRING,
          base: {
            type: 'object',
            description: 'Only in a plan made with --base: the ref the desired state was compared with, and the merge base the change starts at.',
            properties: { ref: { type: 'string' }, commit: COMMIT, mergeBase: COMMIT },
            required: ['ref', 'commit', 'mergeBase'],
            additionalProperties: false,
          },
          incremental: {
            type: 'object',
            description:
              "Only in a plan of the contracts changed since the last applied commit (plan without --full): per tenant the commit it was planned since; the other contracts plan to nothing by the state store's record.",
            properties: {
              tenants: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { tenant: { type: 'string', pattern: TENANT_PATTERN }, since: COMMIT, pending: COUNT },
                  required: ['tenant', 'since', 'pending'],
                  additionalProperties: false,
                },
              },
              full: {
                type: 'array',
                description: 'Tenants planned in full all the same, and why.',
                items: {
                  type: 'object',
                  properties: { tenant: { type: 'string', pattern: TENANT_PATTERN }, reason: { type: 'string' } },
                  required: ['tenant', 'reason'],
                  additionalProperties: false,
                },
              },
            },
            required: ['tenants', 'full'],
            additionalProperties: false,
          },
        },
        required: ['repo', 'ref', 'commit'],
        additionalProperties: false,
      },
      tenants: { type: 'array', items: { $ref: '#/$defs/Tenant' } },
      noLongerManaged: {
        type: 'array',
        description:
          'Only with a base: contracts the base declared and the change removed from the desired state. Left unchanged on the service: the engine never deletes.',
        items: { $ref: '#/$defs/UnmanagedContract' },
      },
      summary: {
        type: 'object',
        properties: {
          tenants: COUNT,
          contracts: COUNT,
          changed: COUNT,
          ops: COUNT,
          touched: COUNT,
          noLongerManaged: COUNT,
          policy: {
            type: 'object',
            description:
              'Only when the checks found something: `findings` counted by what they do (expired: of those denied, needing an override or warned, the ones whose exception has expired).',
            properties: { findings: COUNT, denied: COUNT, needsOverride: COUNT, warned: COUNT, overridden: COUNT, excepted: COUNT, expired: COUNT },
            required: ['findings', 'denied', 'needsOverride', 'warned', 'overridden', 'excepted', 'expired'],
            additionalProperties: false,
          },
        },
        required: ['tenants', 'contracts', 'changed', 'ops'],
        additionalProperties: false,
      },
      madeWith: {
        type: 'object',
        description: 'Recorded by the contract-sync CLI: what a reviewer needs to know about the run that made the plan.',
        properties: {
          version: { type: 'string', minLength: 1, maxLength: 100, description: 'The contract-sync version that computed the ops.' },
          reads: { type: 'boolean', description: 'api.read is configured: apply without a plan file reads each contract live first.' },
          collections: {
            type: 'object',
            description: "Each collection field's mode; authoritative removes known members the desired state does not list.",
            properties: Object.fromEntries(COLLECTION_FIELDS.map((field) => [field.name, { enum: ['authoritative', 'additive'] }])),
            additionalProperties: false,
          },
          maxRemovals: { type: 'integer', minimum: 0, description: "The removal guard's limit (safety.maxRemovals) apply checks after the merge." },
        },
        required: ['version', 'reads', 'collections'],
        additionalProperties: false,
      },
      findings: {
        type: 'array',
        description: "What the plan's checks found (policy rules, a library caller's checks), in tenant order; absent when nothing.",
        items: { $ref: '#/$defs/Finding' },
      },
    },
    required: ['version', 'createdAt', 'source', 'tenants', 'summary'],
    additionalProperties: false,
    $defs: {
      Finding: {
        type: 'object',
        properties: {
          ...FINDING_OWN,
          tenant: { type: 'string', pattern: TENANT_PATTERN },
          contractId: { type: 'string', minLength: 1 },
          file: { type: 'string', minLength: 1 },
          line: { type: 'integer', minimum: 1 },
        },
        required: ['check', 'action', 'tenant', 'message'],
        additionalProperties: false,
      },
      ContractFinding: {
        type: 'object',
        description: "A finding on this contract, as in the plan's findings (where its tenant, file and line are).",
        properties: FINDING_OWN,
        required: ['check', 'action', 'message'],
        additionalProperties: false,
      },
      Tenant: {
        type: 'object',
        properties: {
          tenant: { type: 'string', pattern: TENANT_PATTERN },
          contracts: { type: 'array', items: { $ref: '#/$defs/Contract' } },
        },
        required: ['tenant', 'contracts'],
        additionalProperties: false,
      },
      Contract: {
        type: 'object',
        properties: {
          id: { type: 'string', pattern: CONTRACT_ID_PATTERN },
          file: { type: 'string' },
          line: { type: 'integer', minimum: 1 },
          action: { enum: ['update', 'noop'] },
          touched: { type: 'boolean', description: 'Only with a base: the change adds this contract or edits its desired fields.' },
          knownFrom: {
            enum: ['state', 'live', 'unknown'],
            description: 'unknown: never applied and no read configured; every desired field is set, nothing removed.',
          },
          knownFingerprint: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
          ops: { type: 'array', items: { $ref: '#/$defs/Op' }, description: 'The PATCH body, exactly.' },
          changes: { type: 'array', items: { $ref: '#/$defs/Change' } },
          policy: {
            type: 'array',
            items: { $ref: '#/$defs/ContractFinding' },
            description: "Only when the checks found something on this contract: its findings, as in the plan's findings.",
          },
          desiredChanges: {
            type: 'array',
            items: { $ref: '#/$defs/DesiredChange' },
            description:
              'Only with a base, for a touched contract whose known state is unknown: what the change did to its desired fields (base -> head), which its ops (every desired field set) do not show.',
          },
        },
        required: ['id', 'file', 'line', 'action', 'knownFrom', 'knownFingerprint', 'ops', 'changes'],
        additionalProperties: false,
        // An update sends at least one op; a noop sends no request.
        anyOf: [
          { properties: { action: { const: 'noop' }, ops: { type: 'array', maxItems: 0 }, changes: { type: 'array', maxItems: 0 } } },
          { properties: { action: { const: 'update' }, ops: { type: 'array', minItems: 1 }, changes: { type: 'array', minItems: 1 } } },
        ],
      },
      UnmanagedContract: {
        type: 'object',
        properties: {
          tenant: { type: 'string', pattern: TENANT_PATTERN },
          id: { type: 'string', pattern: CONTRACT_ID_PATTERN },
          file: { type: 'string', description: 'Where the base declared it.' },
          line: { type: 'integer', minimum: 1 },
        },
        required: ['tenant', 'id', 'file', 'line'],
        additionalProperties: false,
      },
      Op: { oneOf: opShapes().map((shape) => shape.schema) },
      Change: {
        type: 'object',
        description: 'For people. A member change: before null for an Add, after null for a Remove.',
        properties: { field: { enum: FIELD_NAMES }, before: {}, after: {} },
        required: ['field', 'before', 'after'],
        additionalProperties: false,
      },
      DesiredChange: {
        type: 'object',
        description: 'For people, as Change; unmanaged: the head no longer writes the field or member (after is null), the service keeps it.',
        properties: { field: { enum: FIELD_NAMES }, before: {}, after: {}, unmanaged: { const: true } },
        required: ['field', 'before', 'after'],
        additionalProperties: false,
      },
    },
  };
}
