/** Words inside a command that a person may copy into a shell. Pure. */

/** Characters that never need quoting in a POSIX shell word (`origin/main`, `+refs/heads/x:refs/...`, `--deepen=50`). */
const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * `word` as one POSIX shell word that means exactly `word`: unchanged when it is plainly safe,
 * else in single quotes (a single quote inside written as `'\''`). Nothing in it can end the
 * command, start another, expand or redirect.
 */
export function shellQuote(word: string): string {
  if (SAFE_WORD.test(word)) return word;
  return `'${word.replaceAll("'", "'\\''")}'`;
}
