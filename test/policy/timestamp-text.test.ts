/**
 * engine/policy/compile.ts timestampFromText: what `timestamp(string)` reads is protobuf's JSON
 * reading of a Timestamp, the same value or the same error, whether the text takes the direct way
 * (a plain UTC date, as the desired state normalises them) or protobuf's.
 */
import { fromJson } from '@bufbuild/protobuf';
import { TimestampSchema } from '@bufbuild/protobuf/wkt';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { timestampFromText } from '../../engine/policy/compile.ts';

function outcome(read: () => unknown): unknown {
  try {
    return { value: read() };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function digits(length: number): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...'0123456789'), { minLength: length, maxLength: length }).map((chars) => chars.join(''));
}

describe('timestampFromText', () => {
  it.each([
    '2026-01-01T00:00:00Z',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '0000-12-31T23:59:59Z',
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-12-31T24:00:00Z',
    '2026-12-31T23:59:60Z',
    '2026-01-01T00:00:00.5Z',
    '2026-01-01T00:00:00+01:00',
    '2026-01-01 00:00:00Z',
    '2026-01-01T00:00:00z',
    'not a date',
  ])('reads %s as protobuf does', (text) => {
    expect(outcome(() => timestampFromText(text))).toEqual(outcome(() => fromJson(TimestampSchema, text)));
  });

  it('reads every text of the plain UTC form, and near it, as protobuf does', () => {
    const plain = fc
      .tuple(digits(4), digits(2), digits(2), digits(2), digits(2), digits(2))
      .map(([year, month, day, hour, minute, second]) => `${year}-${month}-${day}T${hour}:${minute}:${second}Z`);
    const near = fc
      .tuple(plain, fc.constantFrom('', '.123', '+00:00', ' ', 'Z'))
      .map(([text, tail]) => (tail === '+00:00' ? text.slice(0, -1) + tail : text + tail));

    fc.assert(
      fc.property(fc.oneof(plain, near), (text) => {
        expect(outcome(() => timestampFromText(text))).toEqual(outcome(() => fromJson(TimestampSchema, text)));
      }),
      { numRuns: 2000 },
    );
  });
});
