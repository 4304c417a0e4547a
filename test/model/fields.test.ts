import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COLLECTION_FIELDS, FIELD_NAMES, FIELDS, opShapes, patchSchema } from '../../engine/model/index.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

describe('the field table', () => {
  it('holds the 19 patchable fields once each', () => {
    expect(FIELDS).toHaveLength(19);
    expect(new Set(FIELD_NAMES).size).toBe(19);
  });

  it.each([
    ['number', ['AnnualExpensesAmount']],
    ['integer', ['AnnualExpensesCurrencyId', 'Area', 'Category']],
    ['string', ['Comment', 'Description', 'DescriptionSLAConditions', 'Evaluation', 'Signature', 'Name', 'ShortSLAConditions']],
    ['timestamp', ['ValidFrom', 'ValidTo']],
    ['duration', ['OrderingPartyNoticePeriod', 'SupplierNoticePeriod']],
    ['collection', ['Company', 'OrganizationalUnit', 'Owner', 'Type']],
  ])('kind %s: %j (docs/architecture.md section 2)', (kind, names) => {
    expect(FIELDS.filter((field) => field.kind === kind).map((field) => field.name)).toEqual(names);
  });

  it('gives collections Add and Remove, everything else Replace', () => {
    for (const field of FIELDS) {
      expect(field.ops).toEqual(field.kind === 'collection' ? ['Add', 'Remove'] : ['Replace']);
    }
  });

  it.each([
    ['Company', [['Id'], ['RelationType']]],
    ['OrganizationalUnit', [['Id']]],
    [
      'Owner',
      [
        ['OwnerType', 'Value'],
        ['User', 'Id'],
      ],
    ],
    ['Type', [['Lookup']]],
  ])('%s members are identified by %j, which are required', (name, identity) => {
    const field = COLLECTION_FIELDS.find((f) => f.name === name)!;
    expect(field.identity).toEqual(identity);
    for (const keyPath of identity) {
      let schema = field.member;
      for (const [depth, key] of keyPath.entries()) {
        expect(schema.required).toContain(key);
        if (depth < keyPath.length - 1) schema = schema.properties![key]!;
      }
    }
  });

  it('allows exactly the 23 op/path combinations of the service', () => {
    const shapes = opShapes().map((shape) => `${shape.op} /Contract/${shape.field.name}`);
    expect(shapes).toHaveLength(23);
    expect(new Set(shapes).size).toBe(23);
    expect(patchSchema().items?.oneOf).toHaveLength(23);
  });

  it('is the only place in engine/ and emulator/ that spells a field name as a string', async () => {
    // Distinctive names only: "Name" or "Type" also appear as ordinary words.
    const distinctive = FIELD_NAMES.filter((name) => name.length >= 8);
    const literal = new RegExp(`['"\`](${distinctive.join('|')})['"\`]`);
    const offenders: string[] = [];
    for (const file of [...(await sourceFiles('engine')), ...(await sourceFiles('emulator'))]) {
      if (file.startsWith(`engine${path.sep}model${path.sep}`)) continue;
      const text = await readFile(path.join(ROOT, file), 'utf8');
      const match = literal.exec(text);
      if (match) offenders.push(`${file}: ${match[0]}`);
    }
    expect(offenders).toEqual([]);
  });
});
