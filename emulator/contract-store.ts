/** The emulator's live contracts, per tenant; ops go through the model's one interpreter. */
import { applyOps, type ContractFields, type Op } from '../engine/model/index.ts';
import type { ResolvedSeed } from './seed.ts';

export class ContractStore {
  readonly #seed: ResolvedSeed;
  #tenants = new Map<string, Map<string, ContractFields>>();

  constructor(seed: ResolvedSeed) {
    this.#seed = seed;
    this.reset();
  }

  /** Back to the seed's contracts. */
  reset(): void {
    this.#tenants = new Map(
      Object.entries(this.#seed.tenants).map(([tenant, { contracts = {} }]) => [
        tenant,
        new Map(Object.entries(contracts).map(([id, fields]) => [id, structuredClone(fields)])),
      ]),
    );
  }

  /** A copy of the contract, or undefined: another tenant's contract does not exist here. */
  get(tenant: string, id: string): ContractFields | undefined {
    const contract = this.#tenants.get(tenant)?.get(id);
    return contract === undefined ? undefined : structuredClone(contract);
  }

  has(tenant: string, id: string): boolean {
    return this.#tenants.get(tenant)?.has(id) ?? false;
  }

  /** Out-of-band replacement (admin, simulated drift); creates the contract when absent. */
  put(tenant: string, id: string, fields: ContractFields): void {
    let contracts = this.#tenants.get(tenant);
    if (!contracts) {
      contracts = new Map();
      this.#tenants.set(tenant, contracts);
    }
    contracts.set(id, structuredClone(fields));
  }

  /**
   * Applies `ops` all or nothing (applyOps works on a copy and throws before anything is stored).
   * Throws InvalidOpsError or OpConflictError from the model.
   */
  patch(tenant: string, id: string, ops: readonly Op[]): void {
    const contracts = this.#tenants.get(tenant);
    const known = contracts?.get(id);
    if (!contracts || known === undefined) throw new Error(`no contract ${id} for tenant ${tenant}`);
    contracts.set(id, applyOps(known, ops));
  }
}
