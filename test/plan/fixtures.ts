/** A mixed plan input: every kind of change, unknown and unchanged contracts, two tenants. */
import { validateDesiredState, type ContractSet } from '../../engine/desired/index.ts';
import type { ContractFields } from '../../engine/model/index.ts';
import type { KnownContracts, KnownState } from '../../engine/state/index.ts';

export const CREATED_AT = '2026-11-22T10:00:00Z';
export const SOURCE = { repo: '.', ref: null, commit: null };

const FILES = {
  'contracts/acme/facilities.yaml': `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning 2027
    AnnualExpensesAmount: 48000.00
    ValidFrom: 2027-01-01T00:00:00Z
    ValidTo: 2027-12-31T23:59:59Z
    SupplierNoticePeriod: { Days: 30 }
    Company:
      - { Id: 12, RelationType: Supplier }
    OrganizationalUnit:
      - { Id: 3, Name: Facility Management }
  "4712":
    Name: Security services
    Category: 4
    Type:
      - { Lookup: Service, EbaCode: null, IsDora: false }
`,
  'contracts/acme/it.yaml': `tenant: acme
contracts:
  "5001":
    Name: "Laptops \`\`\`fenced\`\`\`"
    Comment: "two\\nlines"
    Owner:
      - { OwnerType: { Name: Responsible, Value: 1 }, User: { Id: 7, Email: ada@example.org } }
`,
  'contracts/globex/leases.yaml': `tenant: globex
contracts:
  "L-1":
    Name: Office lease
    ValidFrom: 2026-01-01T00:00:00Z
`,
};

export function desiredSets(): ContractSet[] {
  const files = Object.entries(FILES).map(([path, content]) => ({ path, content }));
  const result = validateDesiredState(files, {
    tenants: { acme: { clientId: 'a', clientSecret: { env: 'A' } }, globex: { clientId: 'g', clientSecret: { env: 'G' } } },
  });
  if (result.errors.length > 0) throw new Error(`fixture invalid: ${JSON.stringify(result.errors)}`);
  return result.contractSets;
}

export const KNOWN_4711: ContractFields = {
  Name: 'Facility cleaning 2026',
  AnnualExpensesAmount: 48000,
  // Same instant as desired, other notation: no op.
  ValidFrom: '2027-01-01T01:00:00+01:00',
  ValidTo: '2026-12-31T23:59:59Z',
  SupplierNoticePeriod: { Days: 30, Hours: null },
  Description: 'unmanaged: not in the desired file',
  Company: [
    { Id: 12, RelationType: 'Supplier' },
    { Id: 19, RelationType: 'Client' },
  ],
  OrganizationalUnit: [{ Id: 3, Name: 'FM' }],
};

export function knownState(): KnownState {
  return new Map<string, KnownContracts>([
    [
      'acme',
      new Map([
        ['4711', { fields: KNOWN_4711, from: 'state' as const }],
        ['4712', { fields: { Name: 'Security services', Category: 4, Type: [{ Lookup: 'Service', EbaCode: null, IsDora: false }] }, from: 'state' as const }],
      ]),
    ],
    ['globex', new Map([['L-1', { fields: { Name: 'Office lease', ValidFrom: '2026-01-01T00:00:00.000Z' }, from: 'live' as const }]])],
  ]);
}

export const BASE_SOURCE = {
  repo: '.',
  ref: 'HEAD',
  commit: '1111111111111111111111111111111111111111',
  base: { ref: 'origin/main', commit: '2222222222222222222222222222222222222222', mergeBase: '3333333333333333333333333333333333333333' },
};

/** What a pull request did to the mixed fixture: edited 4711 (update) and 4712 (already matches), dropped 4799. */
export const TOUCHED = {
  contracts: new Map([['acme', new Set(['4711', '4712'])]]),
  noLongerManaged: [{ tenant: 'acme', id: '4799', file: 'contracts/acme/facilities.yaml', line: 18 }],
};
