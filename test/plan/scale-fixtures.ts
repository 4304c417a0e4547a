/**
 * Pull-request plans at the scale of issue 23 (item 5): 300 contracts with the same change, and a
 * mixed 300 (groups of the same change, single changes, a long value, a tenant with many
 * contracts, drift outside the pull request). Built with createPlan, as `plan --base` builds them.
 */
import type { ContractSet } from '../../engine/desired/index.ts';
import type { ContractFields } from '../../engine/model/index.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { findTouchedContracts } from '../../engine/plan/touched-contracts.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import type { KnownContract, KnownState } from '../../engine/state/index.ts';
import { BASE_SOURCE, CREATED_AT } from './fixtures.ts';

export const MADE_WITH = {
  version: '0.1.0',
  reads: true,
  collections: { Company: 'authoritative', OrganizationalUnit: 'additive', Owner: 'authoritative', Type: 'additive' },
} as const;

interface Spec {
  readonly tenant: string;
  readonly id: string;
  readonly desired: ContractFields;
  readonly known: ContractFields;
  /** Changed by the pull request; false: drift or not applied yet. */
  readonly touched: boolean;
}

/** Contracts `per` to a file, 4 lines each. */
function planOf(specs: readonly Spec[], per = 100): PlanDocument {
  const sets: ContractSet[] = [];
  const known = new Map<string, Map<string, KnownContract>>();
  const touched = new Map<string, Set<string>>();
  const byTenant = new Map<string, Spec[]>();
  for (const spec of specs) byTenant.set(spec.tenant, [...(byTenant.get(spec.tenant) ?? []), spec]);
  for (const [tenant, list] of byTenant) {
    for (let start = 0; start < list.length; start += per) {
      const file = `contracts/${tenant}/part-${start / per + 1}.yaml`;
      sets.push({
        tenant,
        file,
        contracts: list.slice(start, start + per).map((spec, index) => ({ id: spec.id, line: 3 + index * 4, column: 3, fields: spec.desired })),
      });
    }
    known.set(tenant, new Map(list.map((spec) => [spec.id, { fields: spec.known, from: 'state' as const }])));
    touched.set(tenant, new Set(list.filter((spec) => spec.touched).map((spec) => spec.id)));
  }
  const state: KnownState = known;
  return {
    ...createPlan(sets, state, { createdAt: CREATED_AT, source: BASE_SOURCE, touched: { contracts: touched, noLongerManaged: [] } }),
    madeWith: MADE_WITH,
  };
}

const SUPPLIER = { Id: 12, RelationType: 'Supplier' };

/** The renewal every contract gets: a new end date and a supplier added. */
function renewal(name: string): Pick<Spec, 'desired' | 'known'> {
  return {
    desired: { Name: name, ValidTo: '2027-12-31T23:59:59Z', Company: [SUPPLIER] },
    known: { Name: name, ValidTo: '2026-12-31T23:59:59Z', Company: [] },
  };
}

/** 300 contracts of tenant acme in 3 files, each with the same 2 ops, all changed by the pull request. */
export function identical300(): PlanDocument {
  return planOf(Array.from({ length: 300 }, (_, i) => ({ tenant: 'acme', id: String(10_000 + i), touched: true, ...renewal('Facility cleaning') })));
}

/**
 * 300 contracts in 4 tenants: acme 150 (120 the same renewal, 25 the same owner added, 5 renamed),
 * globex 100 (60 the same category, 30 the same end date, 10 with a 600-character comment each),
 * initech 30 (4 the same renewal, 18 the same category, 8 renamed), and hooli 20
 * drifted outside the pull request (18 the same, 2 single).
 */
export function mixed300(): PlanDocument {
  const specs: Spec[] = [];
  function add(tenant: string, count: number, make: (i: number) => Pick<Spec, 'desired' | 'known'>, touched = true): void {
    const base = specs.filter((spec) => spec.tenant === tenant).length;
    for (let i = 0; i < count; i += 1) specs.push({ tenant, id: `${tenant.slice(0, 1).toUpperCase()}-${1000 + base + i}`, touched, ...make(base + i) });
  }
  const owner = { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 7, Email: 'ada@example.org' } };
  add('acme', 120, () => renewal('Facility cleaning'));
  add('acme', 25, () => ({ desired: { Name: 'IT services', Owner: [owner] }, known: { Name: 'IT services', Owner: [] } }));
  add('acme', 5, (i) => ({ desired: { Name: `Catering ${i} (2027)` }, known: { Name: `Catering ${i}` } }));
  add('globex', 60, () => ({ desired: { Name: 'Lease', Category: 4 }, known: { Name: 'Lease', Category: 3 } }));
  add('globex', 30, () => ({ desired: { Name: 'Lease', ValidTo: '2030-06-30T00:00:00Z' }, known: { Name: 'Lease', ValidTo: '2029-06-30T00:00:00Z' } }));
  add('globex', 10, (i) => ({
    desired: { Name: 'Lease', Comment: `Clause ${i}: ${'the tenant keeps the premises in good repair and returns them as received; '.repeat(8)}` },
    known: { Name: 'Lease', Comment: `Clause ${i}: as agreed in 2019.` },
  }));
  add('initech', 4, () => renewal('Printers'));
  add('initech', 18, () => ({ desired: { Name: 'Printers', Category: 7 }, known: { Name: 'Printers', Category: 6 } }));
  add('initech', 8, (i) => ({ desired: { Name: `Printer fleet ${i} (2027)` }, known: { Name: `Printer fleet ${i}` } }));
  add('hooli', 18, () => ({ desired: { Name: 'Cloud', Category: 2 }, known: { Name: 'Cloud', Category: 1 } }), false);
  add('hooli', 2, (i) => ({ desired: { Name: `Cloud ${i}` }, known: { Name: `Cloud ${i} (edited on the service)` } }), false);
  return planOf(specs);
}

/** The worst case for the comment's length: 300 contracts of acme, each renamed differently (nothing to group). */
export function distinct300(): PlanDocument {
  return planOf(
    Array.from({ length: 300 }, (_, i) => ({
      tenant: 'acme',
      id: String(20_000 + i),
      touched: true,
      desired: { Name: `Contract ${i} (2027)` },
      known: { Name: `Contract ${i}` },
    })),
  );
}

/** 600 contracts in 4 tenants, nothing in the state store; the pull request renews 5 of them. */
export function firstPullRequest600(): PlanDocument {
  const tenants = ['acme', 'beta', 'gamma', 'delta'];
  function fields(index: number, renewed: boolean): ContractFields {
    return {
      Name: `Contract ${index}${renewed ? ' (renewed)' : ''}`,
      ValidFrom: '2026-01-01T00:00:00Z',
      ValidTo: renewed ? '2028-12-31T23:59:59Z' : '2027-12-31T23:59:59Z',
      Comment: `Framework agreement number ${index}, reviewed yearly by procurement`,
      Company: Array.from({ length: 7 }, (_, member) => ({ Id: member + 1, RelationType: member === 0 ? 'Supplier' : 'Customer' })),
    };
  }
  const renewed = new Set(['acme/1003', 'acme/1010', 'acme/1100', 'beta/1004', 'delta/1149']);
  function sets(atHead: boolean): ContractSet[] {
    return tenants.map((tenant) => ({
      tenant,
      file: `contracts/${tenant}.yaml`,
      contracts: Array.from({ length: 150 }, (_, index) => ({
        id: String(1000 + index),
        line: 3 + index * 12,
        column: 3,
        fields: fields(index, atHead && renewed.has(`${tenant}/${1000 + index}`)),
      })),
    }));
  }
  const marks = findTouchedContracts(sets(true), sets(false), new Set(tenants.map((tenant) => `contracts/${tenant}.yaml`)));
  return { ...createPlan(sets(true), new Map(), { createdAt: CREATED_AT, source: BASE_SOURCE, touched: marks }), madeWith: MADE_WITH };
}

/** 300 varied changes in 4 tenants: 148 suppliers removed, and long distinct comments that cannot all fit. */
export function variedWithRemovals(): PlanDocument {
  const tenants = ['acme', 'beta', 'gamma', 'delta'];
  const sets: ContractSet[] = [];
  const known = new Map<string, Map<string, { fields: ContractFields; from: 'state' }>>();
  for (const tenant of tenants) {
    const contracts = Array.from({ length: 75 }, (_, index) => {
      const removes = index < 37;
      return {
        id: String(2000 + index),
        desired: removes ? { Company: [{ Id: 1, RelationType: 'Customer' }] } : { Comment: `${tenant} ${index} ${'long note '.repeat(60)}` },
        known: removes
          ? {
              Company: [
                { Id: 1, RelationType: 'Customer' },
                { Id: 99, RelationType: 'Supplier' },
              ],
            }
          : { Comment: 'old' },
      };
    });
    sets.push({
      tenant,
      file: `contracts/${tenant}.yaml`,
      contracts: contracts.map((c, index) => ({ id: c.id, line: 3 + index * 5, column: 3, fields: c.desired })),
    });
    known.set(tenant, new Map(contracts.map((c) => [c.id, { fields: c.known, from: 'state' as const }])));
  }
  const touched = { contracts: new Map([['acme', new Set(['2040'])]]), noLongerManaged: [] };
  const state: KnownState = known;
  return { ...createPlan(sets, state, { createdAt: CREATED_AT, source: BASE_SOURCE, touched }), madeWith: MADE_WITH };
}
