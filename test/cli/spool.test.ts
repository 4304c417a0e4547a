import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spoolBeside, temporarySpool } from '../../engine/cli/spool.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'spool-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Many small pieces (a plan writes one per contract), with characters of 1 to 4 UTF-8 bytes, so that chunks end inside characters. */
function pieces(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${i}: é€😀 ${'x'.repeat(i % 97)}\n`);
}

async function copied(spool: ReturnType<typeof temporarySpool>): Promise<{ text: string; chunks: number }> {
  const chunks: string[] = [];
  await spool.copyTo(async (chunk) => void chunks.push(chunk));
  return { text: chunks.join(''), chunks: chunks.length };
}

describe('spool', () => {
  it('gives back exactly what was written, piece by piece, across many chunks', async () => {
    const spool = temporarySpool();
    const written = pieces(20_000);
    for (const piece of written) spool.write(piece);

    const { text, chunks } = await copied(spool);

    expect(text).toBe(written.join(''));
    expect(chunks).toBeGreaterThan(10);
    spool.discard();
  });

  it('reset forgets what was written, also what was still gathered', async () => {
    const spool = temporarySpool();
    for (const piece of pieces(20_000)) spool.write(piece);
    spool.write('not flushed yet');
    spool.reset();
    spool.write('after the reset\n');

    expect((await copied(spool)).text).toBe('after the reset\n');
    spool.discard();
  });

  it('commitTo writes what was gathered before it renames, and leaves no temporary file', async () => {
    const target = path.join(dir, 'plan.json');
    const spool = spoolBeside(target);
    const written = pieces(5_000);
    for (const piece of written) spool.write(piece);
    spool.write('{"last":"piece"}\n');

    spool.commitTo(target);

    expect(await readFile(target, 'utf8')).toBe(`${written.join('')}{"last":"piece"}\n`);
    expect(await readdir(dir)).toEqual(['plan.json']);
  });
});
