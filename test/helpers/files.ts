import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A temporary directory holding `files` (path -> content); removed by the returned cleanup. */
export async function writeTree(files: Readonly<Record<string, string | Uint8Array>>): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-test-'));
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(dir, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A minimal valid engine config naming `tenants`, each with an env secret reference. */
export function configYaml(tenants: readonly string[] = ['acme'], extra = ''): string {
  const lines = ['api: { baseUrl: https://cms.example.com }', 'auth: { url: https://login.example.com, realm: cms }', 'tenants:'];
  for (const tenant of tenants) {
    lines.push(`  ${tenant}:`, `    clientId: cs-${tenant}`, `    clientSecret: { env: ${tenant.toUpperCase()}_SECRET }`);
  }
  return `${lines.join('\n')}\n${extra}`;
}

/** A saved plan (`plan --out`) of nothing, valid against the plan schema: no tenant, no contract. */
export const EMPTY_SAVED_PLAN = {
  version: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  source: { repo: '.', ref: null, commit: null },
  tenants: [],
  summary: { tenants: 0, contracts: 0, changed: 0, ops: 0 },
} as const;
