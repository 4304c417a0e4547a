import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  durationsEqual,
  DURATION_UNITS,
  isUtcTimestamp,
  normaliseDuration,
  normaliseNumber,
  normaliseTimestamp,
  timestampProblem,
} from '../../engine/model/index.ts';

const MIN = Date.UTC(1900, 0, 1);
const MAX = Date.UTC(2999, 11, 31);

/** An instant, and the same instant written with an offset and extra fraction digits. */
const instantNotations = fc
  .record({
    ms: fc.integer({ min: MIN, max: MAX }),
    offsetMinutes: fc.integer({ min: -14 * 60, max: 14 * 60 }),
    subMs: fc.integer({ min: 0, max: 999_999 }),
  })
  .map(({ ms, offsetMinutes, subMs }) => {
    const utc = new Date(ms).toISOString();
    const fraction = `${utc.slice(20, 23)}${String(subMs).padStart(6, '0')}`;
    const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19);
    const sign = offsetMinutes < 0 ? '-' : '+';
    const abs = Math.abs(offsetMinutes);
    const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    return { zulu: `${utc.slice(0, 19)}.${fraction}Z`, offset: `${local}.${fraction}${offset}` };
  });

describe('normaliseTimestamp', () => {
  it('answers the same for a text seen before, also after more distinct texts than it keeps parsed (a cache of instants)', () => {
    const texts = Array.from({ length: 6000 }, (_, i) => [
      new Date(Date.UTC(2026, 0, 1) + i * 3_600_123).toISOString(),
      `2026-02-${String((i % 40) + 1).padStart(2, '0')}T00:00:00Z`,
      `2026-01-01T00:00:00+0${i % 10}:00`,
    ]).flat();
    const first = texts.map((text) => [normaliseTimestamp(text), isUtcTimestamp(text), timestampProblem(text)]);
    const again = texts.map((text) => [normaliseTimestamp(text), isUtcTimestamp(text), timestampProblem(text)]);

    expect(again).toEqual(first);
    expect(first.filter(([, , problem]) => problem === 'not a real date or time').length).toBeGreaterThan(0);
    expect(normaliseTimestamp('2026-01-01T00:00:00.5Z')).toBe('2026-01-01T00:00:00.500Z');
    expect(normaliseTimestamp(`2026-01-01T00:00:00Z${' '.repeat(50)}`)).toBeUndefined();
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(instantNotations, ({ zulu, offset }) => {
        for (const text of [zulu, offset]) {
          const once = normaliseTimestamp(text)!;
          expect(normaliseTimestamp(once)).toBe(once);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('gives equal instants in different notations the same form', () => {
    fc.assert(
      fc.property(instantNotations, ({ zulu, offset }) => {
        expect(normaliseTimestamp(offset)).toBe(normaliseTimestamp(zulu));
      }),
      { numRuns: 1000 },
    );
  });

  it('orders canonical forms as their instants', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN, max: MAX }), fc.integer({ min: MIN, max: MAX }), (a, b) => {
        const [na, nb] = [a, b].map((ms) => normaliseTimestamp(new Date(ms).toISOString())!);
        expect(na! < nb!).toBe(a < b);
      }),
    );
  });

  it.each([
    ['2027-01-01T00:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['2027-01-01T01:00:00+01:00', '2027-01-01T00:00:00.000Z'],
    ['2026-12-31T19:00:00-05:00', '2027-01-01T00:00:00.000Z'],
    ['2027-01-01T00:00:00.5Z', '2027-01-01T00:00:00.500Z'],
    ['2027-01-01T00:00:00.123456789Z', '2027-01-01T00:00:00.123456789Z'],
    ['2027-01-01T00:00:00.123400Z', '2027-01-01T00:00:00.1234Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
  ])('%s -> %s', (input, expected) => {
    expect(normaliseTimestamp(input)).toBe(expected);
  });

  it.each([
    ['2027-01-01', 'a date without a time'],
    ['2027-02-30T00:00:00Z', 'not a real date or time'],
    ['2027-01-01T24:00:00Z', 'not a real date or time'],
    ['2027-01-01T00:00:00+01:00', 'not in UTC: use Z, not an offset'],
    ['2027-01-01 00:00:00Z', 'not an ISO 8601 date-time'],
    ['2027-01-01T00:00Z', 'not an ISO 8601 date-time'],
    ['yesterday', 'not an ISO 8601 date-time'],
  ])('refuses %s as a UTC timestamp: %s', (input, problem) => {
    expect(isUtcTimestamp(input)).toBe(false);
    expect(timestampProblem(input)).toBe(problem);
  });
});

describe('normaliseNumber', () => {
  it('is idempotent and numeric', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        expect(normaliseNumber(normaliseNumber(n))).toBe(normaliseNumber(n));
        expect(normaliseNumber(n) === n || (n === 0 && normaliseNumber(n) === 0)).toBe(true);
      }),
      { numRuns: 1000 },
    );
    expect(Object.is(normaliseNumber(-0), 0)).toBe(true);
    expect(normaliseNumber(100)).toBe(normaliseNumber(100.0));
  });
});

describe('normaliseDuration', () => {
  const duration = fc.record(Object.fromEntries(DURATION_UNITS.map((unit) => [unit, fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined })])), {
    requiredKeys: [],
  });

  it('is idempotent and treats absent as null', () => {
    fc.assert(
      fc.property(duration, (d) => {
        const once = normaliseDuration(d);
        expect(normaliseDuration(once)).toEqual(once);
        expect(Object.keys(once)).toEqual([...DURATION_UNITS]);
        for (const unit of DURATION_UNITS) expect(once[unit]).toBe(d[unit] ?? null);
      }),
      { numRuns: 1000 },
    );
  });

  it('compares member by member with absent = null', () => {
    expect(durationsEqual({ Days: 30 }, { Days: 30, Hours: null })).toBe(true);
    expect(durationsEqual({ Days: 30 }, { Days: 30, Hours: 0 })).toBe(false);
    expect(durationsEqual({ Days: 30 }, { Days: 31 })).toBe(false);
  });

  it('durationsEqual is equality of the normal forms, for any two durations (-0, null, absent, NaN and other values too)', () => {
    const unit = fc.oneof(fc.constant(undefined), fc.constant(null), fc.constantFrom(0, -0, 1, 30, Number.NaN), fc.integer({ min: 0, max: 3 }), fc.anything());
    // Read from a store or a live read, a duration is not trusted to be well-formed.
    const equal = durationsEqual as (a: unknown, b: unknown) => boolean;
    const normalise = normaliseDuration as (duration: unknown) => Record<string, unknown>;
    const loose = fc.record(Object.fromEntries(DURATION_UNITS.map((name) => [name, unit])), { requiredKeys: [] });
    fc.assert(
      fc.property(fc.oneof(duration, loose), fc.oneof(duration, loose), (a, b) => {
        const [na, nb] = [normalise(a), normalise(b)];
        expect(equal(a, b)).toBe(DURATION_UNITS.every((name) => na[name] === nb[name]));
        expect(equal(a, a)).toBe(DURATION_UNITS.every((name) => na[name] === na[name]));
      }),
      { numRuns: 2000 },
    );
  });
});
