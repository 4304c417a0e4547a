import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { holdsNothing } from '../../engine/output/stream.ts';
import { spoolBeside, temporarySpool, type Spool } from '../../engine/output/spool.ts';

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

async function copied(spool: Spool, from?: number, to?: number): Promise<{ text: string; chunks: number }> {
  const chunks: string[] = [];
  await spool.copyTo({ text: async (chunk) => void chunks.push(chunk) }, from, to);
  return { text: chunks.join(''), chunks: chunks.length };
}

async function copiedBytes(spool: Spool, from?: number, to?: number): Promise<{ bytes: Buffer; chunks: number }> {
  const chunks: Buffer[] = [];
  await spool.copyTo({ bytes: async (chunk) => void chunks.push(chunk) }, from, to);
  return { bytes: Buffer.concat(chunks), chunks: chunks.length };
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

  it('copies bytes as they were encoded, each chunk a buffer of its own (a stream may hold one until it is written)', async () => {
    const spool = temporarySpool();
    // Pieces longer than a chunk too: they go to the file at once.
    const written = [...pieces(20_000), 'é'.repeat(50_000), '😀'.repeat(30_000), 'tail\n'];
    for (const piece of written) spool.write(piece);

    const { bytes, chunks } = await copiedBytes(spool);

    expect(bytes.equals(Buffer.from(written.join(''), 'utf8'))).toBe(true);
    expect(chunks).toBeGreaterThan(10);
    spool.discard();
  });

  it('position marks what was written so far; a range copies exactly the pieces between two marks, as bytes or as text', async () => {
    const spool = temporarySpool();
    const parts = [pieces(3_000), pieces(7), [], pieces(12_000), ['😀'.repeat(40_000)], pieces(5)];
    const marks = [spool.position()];
    for (const part of parts) {
      for (const piece of part) spool.write(piece);
      marks.push(spool.position());
    }

    expect(marks[0]).toBe(0);
    expect(marks.at(-1)).toBe(Buffer.byteLength(parts.flat().join(''), 'utf8'));
    for (const [index, part] of parts.entries()) {
      expect((await copied(spool, marks[index], marks[index + 1])).text).toBe(part.join(''));
      expect((await copiedBytes(spool, marks[index], marks[index + 1])).bytes.toString('utf8')).toBe(part.join(''));
    }
    spool.reset();
    expect(spool.position()).toBe(0);
    spool.discard();
  });

  it('fills one buffer again only when the output says it holds nothing of the last chunk', async () => {
    const spool = temporarySpool();
    const written = pieces(20_000);
    for (const piece of written) spool.write(piece);

    for (const done of [true, false, undefined]) {
      const buffers: Buffer[] = [];
      const copies: Buffer[] = [];
      // Copied at once, as a file descriptor's stream writes it.
      async function bytes(chunk: Buffer): Promise<void> {
        buffers.push(chunk);
        copies.push(Buffer.from(chunk));
      }
      await spool.copyTo(done === undefined ? { bytes } : { bytes, done: () => done });

      expect(Buffer.concat(copies).toString('utf8')).toBe(written.join(''));
      // Each buffer of 64 KiB has memory of its own (not Node's pool): one when it is filled again.
      const arrays = new Set(buffers.map((chunk) => chunk.buffer));
      if (done === true) expect(arrays.size).toBe(1);
      else expect(arrays.size).toBe(copies.length);
    }
    spool.discard();
  });
});

describe('holdsNothing', () => {
  it('is true only for a stream of a file descriptor that holds no chunk', () => {
    expect(holdsNothing({ fd: 1, writableLength: 0 })).toBe(true);
    expect(holdsNothing({ fd: 1, writableLength: 65_536 })).toBe(false);
    // A reader may keep a chunk after it called back: never reused for it.
    expect(holdsNothing(new Writable({ write: (_chunk, _encoding, callback) => callback() }))).toBe(false);
    expect(holdsNothing({ write: () => true })).toBe(false);
  });
});
