/** Adapter: the file backend, read side (format: file-format.ts). Writes and locks come with apply. */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { contractIdOfFile, parseStateRecord } from './file-format.ts';
import type { KnownContract, KnownContracts, StateStore } from './types.ts';

// Files read at once: enough to hide latency, few enough to stay far from the open-file limit.
const CONCURRENCY = 64;

export function fileStateStore(directory: string): StateStore {
  return {
    async readTenant(tenant: string): Promise<KnownContracts> {
      const tenantDir = path.join(directory, tenant);
      let names: string[];
      try {
        names = await readdir(tenantDir);
      } catch (error) {
        // Nothing applied yet for this tenant.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
        throw error;
      }
      const entries = names.flatMap((name) => {
        const id = contractIdOfFile(name);
        return id === undefined ? [] : [{ id, file: path.join(tenantDir, name) }];
      });
      entries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const known = new Map<string, KnownContract>();
      for (let start = 0; start < entries.length; start += CONCURRENCY) {
        const batch = entries.slice(start, start + CONCURRENCY);
        const records = await Promise.all(
          batch.map(async ({ id, file }) => parseStateRecord(await readFile(file, 'utf8'), file, tenant, id)),
        );
        for (const record of records) known.set(record.contractId, { fields: record.fields, from: 'state' });
      }
      return known;
    },
  };
}
