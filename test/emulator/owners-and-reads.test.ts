/**
 * The emulator and the published shapes: an Owner member's user name, email and unit may be null
 * (seed, PATCH, reads), and a contract stored by an admin PUT keeps keys the model does not list.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator, Seed } from '../../emulator/index.ts';
import { admin, live, patch, read, start, token } from './helpers.ts';

const NULL_OWNER = { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 500, Name: null, Email: null, OrganizationalUnit: { Id: null, Name: null } } };

const SEED = {
  realm: 'cms',
  tenants: {
    acme: {
      clients: [{ clientId: 'acme-rw', secret: 'acme-secret-new', scopes: ['core:read', 'core:write'] }],
      contracts: { '4711': { Name: 'Facility cleaning', Owner: [NULL_OWNER] } },
    },
  },
} satisfies Seed;

let emulator: Emulator;
let acme: string;

beforeAll(async () => {
  emulator = await start(SEED);
  acme = await token(emulator);
});

beforeEach(async () => {
  await admin(emulator, 'POST', '/reset');
});

afterAll(async () => {
  await emulator.close();
});

describe('an Owner member with null user fields', () => {
  it('is seeded and read back with its nulls', async () => {
    const response = await read(emulator, acme, '4711');

    expect(await response.json()).toEqual({ Name: 'Facility cleaning', Owner: [NULL_OWNER] });
  });

  it('is removed and added by PATCH', async () => {
    const deputy = { OwnerType: { Name: 'Deputy', Value: 2 }, User: { Id: 501, Name: 'Dana Berg', Email: null, OrganizationalUnit: { Id: 3, Name: null } } };

    const response = await patch(emulator, acme, '4711', [
      { op: 'Remove', path: '/Contract/Owner', value: NULL_OWNER },
      { op: 'Add', path: '/Contract/Owner', value: deputy },
    ]);

    expect(response.status).toBe(204);
    expect(await live(emulator, 'acme', '4711')).toEqual({ Name: 'Facility cleaning', Owner: [deputy] });
  });

  it.each([
    ['a null user id', { OwnerType: { Name: 'Deputy', Value: 2 }, User: { Id: null } }, 'value.User.Id'],
    ['a numeric email', { OwnerType: { Name: 'Deputy', Value: 2 }, User: { Id: 1, Email: 7 } }, 'value.User.Email'],
    ['a null unit', { OwnerType: { Name: 'Deputy', Value: 2 }, User: { Id: 1, OrganizationalUnit: null } }, 'value.User.OrganizationalUnit'],
  ])('is refused with 400 for %s, which is not nullable', async (_case, value, where) => {
    const response = await patch(emulator, acme, '4711', [{ op: 'Add', path: '/Contract/Owner', value }]);

    expect(response.status).toBe(400);
    const body = (await response.json()) as { problems: { message: string }[] };
    expect(body.problems.map((problem) => problem.message)).toEqual([expect.stringContaining(`${where}: expected`)]);
  });
});

describe('a contract stored with keys the model does not list', () => {
  it('keeps them through a PATCH that removes and adds members by identity', async () => {
    await admin(emulator, 'PUT', '/contracts/acme/4711', {
      Name: 'Facility cleaning',
      Revision: 3,
      Company: [
        { Id: 12, RelationType: 'Supplier', Name: 'Acme Ltd' },
        { Id: 13, RelationType: 'Client', Name: 'Globex' },
      ],
    });

    // The engine sends members as the model knows them: without `Name`.
    const response = await patch(emulator, acme, '4711', [
      { op: 'Remove', path: '/Contract/Company', value: { Id: 12, RelationType: 'Supplier' } },
      { op: 'Add', path: '/Contract/Company', value: { Id: 14, RelationType: 'Partner' } },
    ]);

    expect(response.status).toBe(204);
    expect(await (await read(emulator, acme, '4711')).json()).toEqual({
      Name: 'Facility cleaning',
      Revision: 3,
      Company: [
        { Id: 13, RelationType: 'Client', Name: 'Globex' },
        { Id: 14, RelationType: 'Partner' },
      ],
    });
  });
});
