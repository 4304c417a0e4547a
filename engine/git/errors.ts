/** What can go wrong reading git: one class, a stable code, a message that says what to do. */
export type GitErrorCode = 'not-a-repository' | 'invalid-ref' | 'unknown-ref' | 'no-merge-base' | 'git-failed';

export class GitError extends Error {
  readonly code: GitErrorCode;
  constructor(code: GitErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GitError';
    this.code = code;
  }
}

/** `https://user:token@host` -> `https://***@host`: git's messages may quote a remote URL. */
export function redactUrls(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@');
}

/** What a message quotes of git's stderr: its first line, URLs' credentials masked; never the rest. */
export function firstComplaint(stderr: string): string {
  return redactUrls(stderr.trim().split('\n')[0] ?? '');
}
