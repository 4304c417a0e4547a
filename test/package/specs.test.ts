import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateDesiredState } from '../../engine/desired/index.ts';
import { generatedSpecs, serialiseSpec } from '../../engine/package/specs.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('specs/', () => {
  it.each(Object.entries(generatedSpecs()))('%s equals what the model generates (run `npm run specs`)', async (name, schema) => {
    const onDisk = await readFile(path.join(ROOT, 'specs', name), 'utf8');

    expect(onDisk).toBe(serialiseSpec(schema));
  });
});

describe('contracts.example.yaml', () => {
  it('validates clean and uses every field', async () => {
    const content = await readFile(path.join(ROOT, 'contracts.example.yaml'));

    const result = validateDesiredState([{ path: 'contracts.example.yaml', content }], {
      tenants: { acme: { clientId: 'x', clientSecret: { env: 'X' } } },
    });

    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    const [contract] = result.contractSets[0]!.contracts;
    expect(Object.keys(contract!.fields).sort()).toEqual(Object.keys(generatedSpecs()['contracts.schema.json']!.$defs!.Contract!.properties!).sort());
  });

  it('points editors at the schema', async () => {
    const text = await readFile(path.join(ROOT, 'contracts.example.yaml'), 'utf8');

    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=./specs/contracts.schema.json');
  });
});
