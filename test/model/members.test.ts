import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { completedCopy, completeMember } from '../../engine/model/members.ts';
import { COLLECTION_FIELDS } from '../../engine/model/fields.ts';
import { cloneJson } from '../../engine/model/normalise.ts';
import { members } from '../plan/arbitraries.ts';

/** Every object and array reachable from `value`. */
function objectsIn(value: unknown, found = new Set<object>()): Set<object> {
  if (value !== null && typeof value === 'object') {
    found.add(value);
    for (const item of Object.values(value)) objectsIn(item, found);
  }
  return found;
}

describe('completedCopy', () => {
  it.each(COLLECTION_FIELDS.map((field) => [field.name, field] as const))(
    '%s: what completeMember makes of a copy, sharing nothing with the member or the known one',
    (_, field) => {
      // Valid members, and anything at all (the known state is not trusted to be well-formed).
      const member = fc.oneof(
        members(field).map((list) => list[0]),
        fc.anything(),
      );
      fc.assert(
        fc.property(member, fc.oneof(member, fc.constant(undefined)), (given, known) => {
          const copy = completedCopy(field, given, known);

          expect(copy).toEqual(completeMember(field, cloneJson(given), known));
          expect(JSON.stringify(copy)).toBe(JSON.stringify(completeMember(field, cloneJson(given), known)));
          const shared = objectsIn(given);
          for (const object of objectsIn(known)) shared.add(object);
          for (const object of objectsIn(copy)) expect(shared.has(object)).toBe(false);
        }),
        { numRuns: 500 },
      );
    },
  );
});
