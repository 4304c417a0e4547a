import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSecret, SecretError, type SecretRef } from '../../engine/config/index.ts';
import { writeTree } from '../helpers/files.ts';

let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await writeTree({
    plain: 's3cret-plain',
    newline: 's3cret-newline\n',
    crlf: 's3cret-crlf\r\n',
    twoNewlines: 's3cret-two\n\n',
    empty: '',
    onlyNewline: '\n',
  }));
});

afterAll(async () => {
  await cleanup();
});

function sources(env: Record<string, string | undefined> = {}): { env: Record<string, string | undefined>; readFile: (file: string) => Promise<string> } {
  return { env, readFile: (file: string) => readFile(file, 'utf8') };
}

describe('resolveSecret', () => {
  it('reads an environment variable', async () => {
    const value = await resolveSecret({ env: 'ACME_SECRET' }, sources({ ACME_SECRET: 'from-env ' }));

    expect(value).toBe('from-env ');
  });

  it.each([
    ['plain', 's3cret-plain'],
    ['newline', 's3cret-newline'],
    ['crlf', 's3cret-crlf'],
    ['twoNewlines', 's3cret-two\n'],
  ])('reads file %s, dropping one trailing newline', async (name, expected) => {
    const value = await resolveSecret({ file: path.join(dir, name) }, sources());

    expect(value).toBe(expected);
  });

  it.each<[string, () => SecretRef, Record<string, string>, RegExp]>([
    ['an unset variable', () => ({ env: 'ACME_SECRET' }), {}, /^environment variable ACME_SECRET is not set$/],
    ['an empty variable', () => ({ env: 'ACME_SECRET' }), { ACME_SECRET: '' }, /^environment variable ACME_SECRET is empty$/],
    ['a missing file', () => ({ file: path.join(dir, 'absent') }), {}, /^secret file .*absent does not exist$/],
    ['a directory', () => ({ file: dir }), {}, /^secret file .* cannot be read \(EISDIR\)$/],
    ['an empty file', () => ({ file: path.join(dir, 'empty') }), {}, /^secret file .*empty is empty$/],
    ['a file holding only a newline', () => ({ file: path.join(dir, 'onlyNewline') }), {}, /^secret file .*onlyNewline is empty$/],
  ])('refuses %s with a SecretError naming it', async (_case, ref, env, message) => {
    const failure = resolveSecret(ref(), sources({ ...env, OTHER: 'not-this-one' }));

    await expect(failure).rejects.toBeInstanceOf(SecretError);
    await expect(failure).rejects.toMatchObject({ code: 'secret-unresolved', ref: ref(), message: expect.stringMatching(message) });
  });
});
