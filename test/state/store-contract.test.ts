/** The shared StateStore suite (store-contract.ts) on every backend, PostgreSQL on a server of its own. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { fileStateStore, memoryStateStore } from '../../engine/state/index.ts';
import { openPostgresStateStore } from '../../engine/state/postgres/index.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';
import { describeStateStore } from './store-contract.ts';

let server: PostgresServer;
let url: string;
let schemas = 0;

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

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
    // A schema per test: as fresh as a new database, and much cheaper.
    const schema = `case_${++schemas}`;
    return { open: () => openPostgresStateStore({ url, schema }), child: { backend: 'postgres', location: url, schema } };
  },
  { acrossProcesses: true },
);
