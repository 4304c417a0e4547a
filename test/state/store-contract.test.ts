/** The shared StateStore suite (store-contract.ts) on every backend, PostgreSQL on a server of its own. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileStateStore, memoryStateStore } from '../../engine/state/index.ts';
import { openPostgresStateStore } from '../../engine/state/postgres/index.ts';
import { postgresDatabaseForFile } from '../helpers/postgres-server.ts';
import { describeStateStore } from './store-contract.ts';

const database = postgresDatabaseForFile();

describeStateStore(
  'memory',
  async () => {
    // One store stands for every instance: its records and locks live in this process only.
    const store = memoryStateStore();
    return { open: async () => store };
  },
  { acrossProcesses: false },
);

describeStateStore(
  'file',
  async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-store-'));
    return { open: async () => fileStateStore(dir), child: { backend: 'file', location: dir }, cleanup: () => rm(dir, { recursive: true, force: true }) };
  },
  { acrossProcesses: true },
);

describeStateStore(
  'postgres',
  async () => {
    const schema = database.newSchema('case');
    return { open: () => openPostgresStateStore({ url: database.url, schema }), child: { backend: 'postgres', location: database.url, schema } };
  },
  { acrossProcesses: true },
);
