import { describe, expect, it } from 'vitest';
import { plural } from '../../engine/text/plural.ts';

describe('plural', () => {
  it.each<[number, string, string | undefined, string]>([
    [0, 'contract', undefined, '0 contracts'],
    [1, 'contract', undefined, '1 contract'],
    [2, 'contract', undefined, '2 contracts'],
    [1, 'retry', 'retries', '1 retry'],
    [3, 'retry', 'retries', '3 retries'],
    [1, 'contract is', 'contracts are', '1 contract is'],
  ])('plural(%d, %s, %s) is %s', (n, word, many, expected) => {
    expect(plural(n, word, many)).toBe(expected);
  });
});

describe('human output says no "(s)"', () => {
  it('no engine source builds a count with "(s)"', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const path = await import('node:path');
    const root = path.resolve(import.meta.dirname, '../../engine');
    const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith('.ts'));
    const offenders: string[] = [];
    for (const file of files) {
      const lines = (await readFile(path.join(root, file), 'utf8')).split('\n');
      for (const [index, line] of lines.entries()) {
        // Comments may say "(s)"; strings the user reads may not.
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) continue;
        if (/\w\((s|es)\)/.test(line)) offenders.push(`engine/${file}:${index + 1}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
