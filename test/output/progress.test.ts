/**
 * The progress renderer on an injected clock: one line redrawn in place on a terminal (done/total,
 * rate, time left, failures), and plain lines without one at most every 10 s and at each quarter.
 */
import { describe, expect, it } from 'vitest';
import type { ApplyProgress } from '../../engine/pipeline/index.ts';
import { createProgress, formatDuration, wrapToWidth } from '../../engine/output/progress.ts';

function sink(isTTY: boolean): { stream: { write(text: string): void; isTTY: boolean }; text(): string } {
  const chunks: string[] = [];
  return { stream: { write: (text) => void chunks.push(text), isTTY }, text: () => chunks.join('') };
}

function event(
  step: ApplyProgress['step'],
  done: number,
  total: number,
  outcome: ApplyProgress['outcome'] = step === 'read' ? 'read' : 'applied',
): ApplyProgress {
  return { step, tenant: 'acme', contractId: `C-${done}`, outcome, done, total };
}

describe('progress without a terminal', () => {
  it('writes a plain line at each quarter and at most every 10 s between them, with rate, time left and failures', () => {
    let now = 1_000_000;
    const out = sink(false);
    const progress = createProgress({ stream: out.stream, now: () => now, prefix: 'contract-sync apply' });
    progress.start('send');
    // 2 contracts a second for 200 contracts: 100 s in all.
    for (let done = 1; done <= 200; done += 1) {
      now += 500;
      progress.update(event('send', done, 200, done === 7 || done === 120 ? 'failed' : 'applied'));
    }
    progress.finish();
    expect(out.text().split('\n').filter(Boolean)).toEqual([
      'contract-sync apply: sending 20/200 contracts (10%), 2.0/s, about 1m30s left, 1 failed',
      'contract-sync apply: sending 40/200 contracts (20%), 2.0/s, about 1m20s left, 1 failed',
      'contract-sync apply: sending 50/200 contracts (25%), 2.0/s, about 1m15s left, 1 failed',
      'contract-sync apply: sending 70/200 contracts (35%), 2.0/s, about 1m05s left, 1 failed',
      'contract-sync apply: sending 90/200 contracts (45%), 2.0/s, about 55s left, 1 failed',
      'contract-sync apply: sending 100/200 contracts (50%), 2.0/s, about 50s left, 1 failed',
      'contract-sync apply: sending 120/200 contracts (60%), 2.0/s, about 40s left, 2 failed',
      'contract-sync apply: sending 140/200 contracts (70%), 2.0/s, about 30s left, 2 failed',
      'contract-sync apply: sending 150/200 contracts (75%), 2.0/s, about 25s left, 2 failed',
      'contract-sync apply: sending 170/200 contracts (85%), 2.0/s, about 15s left, 2 failed',
      'contract-sync apply: sending 190/200 contracts (95%), 2.0/s, about 5s left, 2 failed',
      'contract-sync apply: sending 200/200 contracts (100%), 2.0/s, done in 1m40s, 2 failed',
    ]);
  });

  it('a fast step writes its quarters only; each step counts from its own start', () => {
    let now = 0;
    const out = sink(false);
    const progress = createProgress({ stream: out.stream, now: () => now, prefix: 'contract-sync drift' });
    progress.start('read');
    for (let done = 1; done <= 8; done += 1) {
      now += 250;
      progress.update(event('read', done, 8, done === 3 ? 'not-on-service' : 'read'));
    }
    now += 60_000;
    progress.start('send');
    now += 1000;
    progress.update(event('send', 1, 1));
    expect(out.text()).toBe(
      [
        'contract-sync drift: reading 2/8 contracts (25%), 4.0/s, about 2s left, 0 failed',
        'contract-sync drift: reading 4/8 contracts (50%), 4.0/s, about 1s left, 1 failed',
        'contract-sync drift: reading 6/8 contracts (75%), 4.0/s, about 1s left, 1 failed',
        'contract-sync drift: reading 8/8 contracts (100%), 4.0/s, done in 2s, 1 failed',
        'contract-sync drift: sending 1/1 contracts (100%), 1.0/s, done in 1s, 0 failed',
        '',
      ].join('\n'),
    );
  });
});

describe('progress on a terminal', () => {
  it('redraws one line in place (at most every 100 ms), ends it when the step is done, and starts a new line for the next step', () => {
    let now = 0;
    const out = sink(true);
    const progress = createProgress({ stream: out.stream, now: () => now, prefix: 'contract-sync apply' });
    progress.start('read');
    for (let done = 1; done <= 4; done += 1) {
      now += 50;
      progress.update(event('read', done, 4));
    }
    progress.start('send');
    now += 2000;
    progress.update(event('send', 1, 3));
    now += 2000;
    progress.update(event('send', 2, 3, 'failed'));
    progress.interrupt();
    progress.finish();
    expect(out.text()).toBe(
      [
        '\r\u001b[Kreading [######------------------] 1/4  20.0/s  about 0s left  0 failed',
        '\r\u001b[Kreading [##################------] 3/4  20.0/s  about 0s left  0 failed',
        '\r\u001b[Kreading [########################] 4/4  20.0/s  done in 0s  0 failed\n',
        '\r\u001b[Ksending [########----------------] 1/3  0.5/s  about 4s left  0 failed',
        '\r\u001b[Ksending [################--------] 2/3  0.5/s  about 2s left  1 failed\n',
      ].join(''),
    );
  });

  it('says durations in seconds, minutes and hours', () => {
    expect([999, 59_400, 61_000, 3_599_000, 3_720_000].map(formatDuration)).toEqual(['1s', '59s', '1m01s', '59m59s', '1h02m']);
  });
});

describe('progress on a narrow terminal (issue 38, item 3)', () => {
  it('cuts the line to the width, one column free, so it never wraps; a resize is followed at the next redraw', () => {
    let now = 0;
    const chunks: string[] = [];
    const widths: number[] = [];
    const stream = {
      write: (text: string) => {
        chunks.push(text);
        if (text.startsWith('\r')) widths.push(stream.columns);
      },
      isTTY: true,
      columns: 50,
    };
    const progress = createProgress({ stream, now: () => now, prefix: 'contract-sync apply' });
    progress.start('send');

    for (let done = 1; done <= 2200; done += 1) {
      now += 20;
      if (done === 1000) stream.columns = 30;
      if (done === 2000) stream.columns = 200;
      progress.update(event('send', done, 2200));
    }
    progress.finish();

    const draws = chunks.filter((chunk) => chunk.startsWith('\r\u001b[K')).map((chunk) => chunk.slice(4));
    expect(draws.length).toBeGreaterThan(20);
    function at(columns: number): string[] {
      return draws.filter((line) => line.length === columns - 1);
    }
    // Cut at 49 then 29 columns, ending in an ellipsis; whole once the terminal is wide again.
    expect(at(50).length).toBeGreaterThan(0);
    expect(at(30).length).toBeGreaterThan(0);
    for (const line of [...at(50), ...at(30)]) expect(line).toMatch(/^sending \[#*-*\]? ?.*…$/);
    expect(draws.at(-1)).toMatch(/^sending \[#{24}\] 2200\/2200 {2}50\.0\/s {2}done in 44s {2}0 failed$/);
    // Every line drawn fits the width the terminal had then.
    for (const [index, line] of draws.entries()) expect(line.length).toBeLessThan(widths[index]!);
    // One line in all: no newline until the step ends.
    expect(chunks.join('').split('\n')).toHaveLength(2);
  });
});

describe('the question and the summary above it on a narrow terminal (issue 38, item 3)', () => {
  const summary = [
    '8 of 12 contracts in 2 tenants to update, 24 ops.',
    '  tenant-a: 4 to update, 12 ops, 2 members removed',
    '  tenant-b: 4 to update, 12 ops, 2 members removed',
    'The whole plan was written to standard output (not this terminal).',
    '',
  ].join('\n');

  it('breaks each line wider than 50 columns after one of its parts, hanging under an indented line; nothing is cut', () => {
    const text = wrapToWidth(summary, 50);

    expect(text).toBe(
      [
        '8 of 12 contracts in 2 tenants to update, 24 ops.',
        '  tenant-a: 4 to update, 12 ops,',
        '    2 members removed',
        '  tenant-b: 4 to update, 12 ops,',
        '    2 members removed',
        'The whole plan was written to standard output',
        '(not this terminal).',
        '',
      ].join('\n'),
    );
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(49);
  });

  it('breaks the question between its sentences and keeps the space the answer is typed after', () => {
    const question = "Apply 3000 ops to 3000 contracts in 2 tenants? Only 'yes' is accepted: ";

    expect(wrapToWidth(question, 50)).toBe("Apply 3000 ops to 3000 contracts in 2 tenants?\nOnly 'yes' is accepted: ");
    expect(wrapToWidth(question, 200)).toBe(question);
    expect(wrapToWidth(question, undefined)).toBe(question);
  });

  it("does not count the question's trailing space, and leaves a terminal too narrow to break for alone", () => {
    // 24 characters and the space the answer follows fit 25 columns (one left free): not broken for the space.
    expect(wrapToWidth('Type yes to apply these: ', 25)).toBe('Type yes to apply these: ');
    expect(wrapToWidth("Apply? Only 'yes' is accepted: ", 20)).toBe("Apply?\nOnly 'yes' is\naccepted: ");
    // Broken at 2 columns, the question would be a column of ellipses.
    expect(wrapToWidth("Apply? Only 'yes' is accepted: ", 2)).toBe("Apply? Only 'yes' is accepted: ");
  });

  it.each([
    // A part wider than the terminal: between its words.
    [30, 'Apply 3000 ops to 3000 contracts in 2 tenants? ok', ['Apply 3000 ops to 3000', 'contracts in 2 tenants? ok']],
    // Only a word wider than the terminal is cut, ending in an ellipsis.
    [20, '  a-tenant-with-a-very-long-name: 4 to update', ['  a-tenant-with-a-…', '    4 to update']],
  ])('at %i columns: %j', (columns, line, lines) => {
    const text = wrapToWidth(line, columns);

    expect(text.split('\n')).toEqual(lines);
    for (const each of text.split('\n')) expect(each.length).toBeLessThan(columns);
  });
});
