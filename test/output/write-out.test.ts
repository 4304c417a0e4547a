import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { writeOut } from '../../engine/output/stream.ts';

/** A stream whose write() always says "full": it takes the chunk, and the writer must wait for 'drain'. */
class FullStream extends EventEmitter {
  readonly chunks: string[] = [];
  destroyed = false;
  write(text: string): boolean {
    this.chunks.push(text);
    return false;
  }
}

/** Lets every pending promise callback and I/O turn run: what a writer not waiting for 'drain' would use to go on. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
}

const MI = 1024 * 1024;

describe('writeOut', () => {
  it("writes a long text in chunks of at most 1 Mi characters, each only after the stream's 'drain'", async () => {
    const stream = new FullStream();
    const text = 'x'.repeat(2 * MI + 10);
    let finished = false;
    const writing = writeOut(stream, text).then(() => (finished = true));

    await settle();
    expect(stream.chunks.map((chunk) => chunk.length)).toEqual([MI]);
    stream.emit('drain');
    await settle();
    expect(stream.chunks.map((chunk) => chunk.length)).toEqual([MI, MI]);
    expect(finished).toBe(false);
    stream.emit('drain');
    await settle();
    expect(stream.chunks.map((chunk) => chunk.length)).toEqual([MI, MI, 10]);
    expect(finished).toBe(false);
    stream.emit('drain');
    await writing;
    expect(stream.chunks.join('')).toBe(text);
    expect(stream.listenerCount('drain') + stream.listenerCount('close') + stream.listenerCount('error')).toBe(0);
  });

  it('never cuts a character written as a surrogate pair in two', async () => {
    const stream = new FullStream();
    const text = `${'x'.repeat(MI - 1)}😀${'y'.repeat(5)}`;
    const writing = writeOut(stream, text);
    for (let drains = 0; drains < 3; drains++) {
      await settle();
      stream.emit('drain');
    }
    await writing;

    expect(stream.chunks.map((chunk) => chunk.length)).toEqual([MI - 1, 7]);
    expect(stream.chunks.join('')).toBe(text);
  });

  it("goes on when the stream closes instead of draining, and fails with the stream's error", async () => {
    const closed = new FullStream();
    const writing = writeOut(closed, 'x'.repeat(MI + 1));
    await settle();
    // As a Node stream does: destroyed first, then 'close'.
    closed.destroyed = true;
    closed.emit('close');
    await writing;
    expect(closed.chunks.map((chunk) => chunk.length)).toEqual([MI, 1]);

    const failing = new FullStream();
    const failed = writeOut(failing, 'x'.repeat(MI + 1));
    await settle();
    failing.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await expect(failed).rejects.toThrow('write EPIPE');
    expect(failing.chunks).toHaveLength(1);
  });

  it('writes everything at once to a stream that cannot say when it drained (a collector), and nothing for an empty text', async () => {
    const chunks: string[] = [];
    await writeOut({ write: (text: string) => chunks.push(text) }, 'x'.repeat(MI + 1));
    await writeOut({ write: (text: string) => chunks.push(text) }, '');

    expect(chunks.map((chunk) => chunk.length)).toEqual([MI, 1]);
  });
});
