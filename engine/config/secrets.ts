/**
 * Adapter: the value behind a `SecretRef` (`{env}` or `{file}`). Errors name the variable or the
 * file, never a value.
 */
import { readProblem } from '../io/bounded-read.ts';
import type { SecretRef } from './types.ts';

export interface SecretSources {
  readonly env: Readonly<Record<string, string | undefined>>;
  readFile(path: string): Promise<string>;
}

/** A secret reference that leads to no usable value. The message names where it looked. */
export class SecretError extends Error {
  readonly code = 'secret-unresolved';
  /** The reference (a variable name or a file path: never a value). */
  readonly ref: SecretRef;
  constructor(ref: SecretRef, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SecretError';
    this.ref = ref;
  }
}

/** The place a reference points to, as messages name it. */
export function describeSecretRef(ref: SecretRef): string {
  return 'env' in ref ? `environment variable ${ref.env}` : `file ${ref.file}`;
}

// Secret files are usually written by `echo` or a secret mount: one trailing newline is not part of the value.
function withoutTrailingNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

async function readSecretFile(ref: { readonly file: string }, sources: SecretSources): Promise<string> {
  try {
    return await sources.readFile(ref.file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const problem = readProblem(error);
    const reason = code === 'ENOENT' ? 'does not exist' : problem !== undefined ? `is ${problem}` : `cannot be read (${code ?? 'error'})`;
    // The cause is a file-system error: it names the path, never the content.
    throw new SecretError(ref, `secret file ${ref.file} ${reason}`, { cause: error });
  }
}

/** The secret's value; rejects with a SecretError when it is unset, unreadable or empty. */
export async function resolveSecret(ref: SecretRef, sources: SecretSources): Promise<string> {
  if ('env' in ref) {
    const value = sources.env[ref.env];
    if (value === undefined) throw new SecretError(ref, `environment variable ${ref.env} is not set`);
    if (value === '') throw new SecretError(ref, `environment variable ${ref.env} is empty`);
    return value;
  }
  const value = withoutTrailingNewline(await readSecretFile(ref, sources));
  if (value === '') throw new SecretError(ref, `secret file ${ref.file} is empty`);
  return value;
}
