/**
 * oidc-provider's storage adapter, in memory and per emulator instance. (The built-in one is shared
 * by every provider in the process and warns on each start; the emulator is meant to forget.)
 */
type Payload = Record<string, unknown>;

export function memoryAdapterFactory(): new (model: string) => object {
  const store = new Map<string, Payload>();
  const grants = new Map<string, Set<string>>();

  return class MemoryAdapter {
    readonly #model: string;

    constructor(model: string) {
      this.#model = model;
    }

    #key(id: string): string {
      return `${this.#model}:${id}`;
    }

    async upsert(id: string, payload: Payload): Promise<void> {
      const key = this.#key(id);
      store.set(key, payload);
      if (typeof payload.grantId === 'string') {
        const keys = grants.get(payload.grantId) ?? new Set<string>();
        keys.add(key);
        grants.set(payload.grantId, keys);
      }
    }

    async find(id: string): Promise<Payload | undefined> {
      return store.get(this.#key(id));
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      return [...store.values()].find((payload) => payload.userCode === userCode);
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      return [...store.values()].find((payload) => payload.uid === uid);
    }

    async consume(id: string): Promise<void> {
      const payload = store.get(this.#key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }

    async destroy(id: string): Promise<void> {
      store.delete(this.#key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      for (const key of grants.get(grantId) ?? []) store.delete(key);
      grants.delete(grantId);
    }
  };
}
