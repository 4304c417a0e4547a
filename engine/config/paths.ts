/**
 * The config's paths stay inside the repository (docs/architecture.md, "Paths"). Pure: the config
 * as written in, problems at the config's lines out.
 *
 * - Desired-state globs and tenant `paths` are repository-relative: an absolute one (`/etc/*`,
 *   `C:/x`, `\\server\share`) or one with a `..` step (`../../etc/shadow`, `{..,x}/*.yaml`) could
 *   select a file outside the repository, whose lines validation would then quote. Both are errors.
 * - `{ file }` secrets and a file state path are never shown, only read or written: an absolute path
 *   is the operator's deliberate choice (a secret mount such as /run/secrets/acme, a state directory
 *   shared by several clones) and is allowed; a relative one is read from inside the repository, so
 *   a `..` step that would climb out of it is an error.
 */
import type { PathSegment } from '../model/schema-validator.ts';
import type { SchemaProblem } from '../yaml/yaml-source.ts';

/** `..` as a whole step of a path or of a glob alternative (`{..,a}`, `@(..)`, `!..`). */
const PARENT_STEP = /(?:^|[/\\{,(|!])\.\.(?:$|[/\\},)|])/;
/** `/x`, `\x`, `C:x`, and `~`, which a shell would expand to a home directory. */
const ABSOLUTE = /^(?:[/\\~]|[A-Za-z]:)/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Why `glob` may select files outside the repository, if it may. */
export function globOutsideRepository(glob: string): string | undefined {
  const pattern = glob.replace(/^!+/, '');
  if (ABSOLUTE.test(pattern)) return `the glob ${JSON.stringify(glob)} is absolute; desired-state globs are relative to the repository root`;
  if (PARENT_STEP.test(pattern))
    return `the glob ${JSON.stringify(glob)} has a ".." step and could leave the repository; desired-state globs are relative to the repository root`;
  return undefined;
}

/** Why the relative file path `file` climbs out of the repository, if it does (absolute paths are allowed). */
function climbsOut(file: string, what: string): string | undefined {
  if (ABSOLUTE.test(file) && !file.startsWith('~')) return undefined;
  if (file.startsWith('~')) return `${what} ${JSON.stringify(file)} starts with "~", which is not expanded; write the absolute path`;
  return PARENT_STEP.test(file)
    ? `${what} ${JSON.stringify(file)} has a ".." step and could leave the repository; write the absolute path if it lives outside`
    : undefined;
}

function globProblems(value: unknown, path: readonly PathSegment[]): SchemaProblem[] {
  if (!Array.isArray(value)) return [];
  const problems: SchemaProblem[] = [];
  for (const [index, glob] of value.entries()) {
    if (typeof glob !== 'string') continue;
    const message = globOutsideRepository(glob);
    if (message !== undefined) problems.push({ path: [...path, index], code: 'config-path', message });
  }
  return problems;
}

function secretProblem(ref: unknown, path: readonly PathSegment[]): SchemaProblem[] {
  if (!isRecord(ref) || typeof ref.file !== 'string') return [];
  const message = climbsOut(ref.file, 'the secret file');
  return message === undefined ? [] : [{ path: [...path, 'file'], code: 'config-path', message }];
}

/** Every path of the config (as written, before defaults) that may lead outside the repository. */
export function configPathProblems(raw: Record<string, unknown>): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  if (isRecord(raw.desired)) problems.push(...globProblems(raw.desired.paths, ['desired', 'paths']));
  if (isRecord(raw.tenants)) {
    for (const [tenant, settings] of Object.entries(raw.tenants)) {
      if (!isRecord(settings)) continue;
      problems.push(...globProblems(settings.paths, ['tenants', tenant, 'paths']));
      problems.push(...secretProblem(settings.clientSecret, ['tenants', tenant, 'clientSecret']));
      problems.push(...secretProblem(settings.previousClientSecret, ['tenants', tenant, 'previousClientSecret']));
    }
  }
  if (Array.isArray(raw.notify)) {
    for (const [index, channel] of raw.notify.entries()) {
      if (!isRecord(channel)) continue;
      problems.push(...secretProblem(channel.url, ['notify', index, 'url']));
      problems.push(...secretProblem(channel.secret, ['notify', index, 'secret']));
    }
  }
  if (isRecord(raw.state)) {
    if (typeof raw.state.path === 'string') {
      const message = climbsOut(raw.state.path, 'the state path');
      if (message !== undefined) problems.push({ path: ['state', 'path'], code: 'config-path', message });
    }
    problems.push(...secretProblem(raw.state.url, ['state', 'url']));
  }
  return problems;
}
