/**
 * TypeScript types of a contract's patchable fields, desired and known alike. A desired member
 * carries every non-nullable member field (the schema in engine/model/fields.ts checks that); a
 * known member read from the service is guaranteed only its identity, so the types leave the other
 * member fields optional.
 */
import type { CollectionFieldName, DurationUnit, FieldName, FIELDS } from './fields.ts';

export type Duration = { [Unit in DurationUnit]?: number | null };

export interface CompanyMember {
  Id: number;
  RelationType: string;
}

export interface OrganizationalUnitMember {
  Id: number;
  Name?: string;
}

export interface OwnerMember {
  OwnerType: { Name?: string; Value: number };
  User: {
    Id: number;
    Name?: string | null;
    Email?: string | null;
    OrganizationalUnit?: { Id?: number | null; Name?: string | null };
  };
}

export interface TypeMember {
  Lookup: string;
  EbaCode?: string | null;
  IsDora?: boolean;
}

interface MemberByField {
  Company: CompanyMember;
  OrganizationalUnit: OrganizationalUnitMember;
  Owner: OwnerMember;
  Type: TypeMember;
}

// Fails to compile if the member types above and the field table disagree on collection names.
type AssertSame<A extends B, B extends C, C = A> = [A, B];
export type _MembersMatchTable = AssertSame<keyof MemberByField, CollectionFieldName>;

export type Member = MemberByField[CollectionFieldName];

interface ValueByKind {
  number: number;
  integer: number;
  string: string;
  timestamp: string;
  duration: Duration;
}

type Spec = (typeof FIELDS)[number];

/** A contract's fields keyed by field name; an absent field is unmanaged. */
export type ContractFields = {
  [S in Spec as S['name']]?: S extends { kind: 'collection'; name: infer N extends CollectionFieldName }
    ? MemberByField[N][]
    : ValueByKind[Exclude<S['kind'], 'collection'>];
};

export type FieldValue = NonNullable<ContractFields[FieldName]>;

/** One service operation, as sent in the body of `PATCH /contract/:ContractId`. */
export interface Op {
  op: 'Replace' | 'Add' | 'Remove';
  path: `/Contract/${FieldName}`;
  value: unknown;
}

/** Where a contract's known state came from: the state store (what we last applied) or a live read. */
export type KnownSource = 'state' | 'live';

/** The last known state of one contract. */
export interface KnownContract {
  readonly fields: ContractFields;
  readonly from: KnownSource;
}

/** Known state of one tenant's contracts, by ContractId. A contract never applied is absent. */
export type KnownContracts = ReadonlyMap<string, KnownContract>;

/** Known state of every tenant, by tenant name. */
export type KnownState = ReadonlyMap<string, KnownContracts>;
