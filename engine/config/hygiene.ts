/**
 * Secrets hygiene, checked early by `validate` (docs/architecture.md section 5): warnings about
 * how the config's secrets are kept, never errors. Pure: the config, where its keys are written,
 * the time and what git tracks come in; diagnostics come out.
 */
import { compareDiagnostics, type Diagnostic } from '../diagnostic/diagnostic.ts';
import type { PathSegment } from '../model/schema-validator.ts';
import { formatPath, type Position } from '../yaml/yaml-source.ts';
import { MAX_SECRET_AGE_MONTHS, overlapEndsAt, ROTATION_OVERLAP_DAYS, secretOverdueAt } from './secret-age.ts';
import type { Config, SecretRef } from './types.ts';

export { ROTATION_OVERLAP_DAYS } from './secret-age.ts';

/** A `{ file: ... }` secret reference of the config, and where it is written. */
export interface SecretFileRef {
  /** The path of the reference's `file` key: `['tenants', 'acme', 'clientSecret', 'file']`. */
  readonly path: readonly PathSegment[];
  /** As written: relative paths are read relative to the working directory. */
  readonly file: string;
  readonly tenant?: string;
}

export interface HygieneInput {
  readonly config: Pick<Config, 'tenants' | 'state' | 'notify'>;
  /** The config file as messages name it. */
  readonly file: string;
  /** Where a path of the config is written (the value, or its map when the key is missing). */
  readonly positionOf: (path: readonly PathSegment[]) => Position;
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** The `file` of those secret file references (as written) that lie inside the repository and git tracks. */
  readonly trackedSecretFiles: ReadonlySet<string>;
}

function fileRef(ref: SecretRef | undefined, path: readonly PathSegment[], tenant?: string): SecretFileRef[] {
  if (ref === undefined || !('file' in ref)) return [];
  return [{ path: [...path, 'file'], file: ref.file, ...(tenant === undefined ? {} : { tenant }) }];
}

/** Every `{ file: ... }` secret reference of the config: tenant client secrets, the state store URL, notification URLs and keys. */
export function secretFileRefs(config: Pick<Config, 'tenants' | 'state' | 'notify'>): SecretFileRef[] {
  const refs: SecretFileRef[] = [];
  for (const [tenant, settings] of Object.entries(config.tenants)) {
    refs.push(...fileRef(settings.clientSecret, ['tenants', tenant, 'clientSecret'], tenant));
    refs.push(...fileRef(settings.previousClientSecret, ['tenants', tenant, 'previousClientSecret'], tenant));
  }
  if (config.state.backend === 'postgres') refs.push(...fileRef(config.state.url, ['state', 'url']));
  for (const [index, channel] of (config.notify ?? []).entries()) {
    if (typeof channel.url !== 'string') refs.push(...fileRef(channel.url, ['notify', index, 'url']));
    refs.push(...fileRef(channel.secret, ['notify', index, 'secret']));
  }
  return refs;
}

export function secretHygiene(input: HygieneInput): Diagnostic[] {
  const { config, file, positionOf, now, trackedSecretFiles } = input;
  const diagnostics: Diagnostic[] = [];
  function warn(code: string, path: readonly PathSegment[], message: string, tenant?: string): void {
    const { line, column } = positionOf(path);
    diagnostics.push({ severity: 'warning', code, file, line, column, field: formatPath(path), message, ...(tenant === undefined ? {} : { tenant }) });
  }

  for (const [tenant, settings] of Object.entries(config.tenants)) {
    const rotatedAt = settings.secretRotatedAt;
    const overdueAt = rotatedAt === undefined ? undefined : secretOverdueAt(rotatedAt);
    if (overdueAt !== undefined && now >= overdueAt) {
      warn(
        'secret-age',
        ['tenants', tenant, 'secretRotatedAt'],
        `the client secret of tenant ${tenant} was rotated on ${rotatedAt}, ${MAX_SECRET_AGE_MONTHS} or more months ago: rotate it and update secretRotatedAt`,
        tenant,
      );
    }
    if (settings.previousClientSecret === undefined) continue;
    const previousPath = ['tenants', tenant, 'previousClientSecret'];
    if (rotatedAt === undefined) {
      // Without the date the overlap never visibly ends, and the old secret stays usable for good.
      warn(
        'secret-overlap',
        previousPath,
        `previousClientSecret is configured without secretRotatedAt: set the rotation date, so that the end of the ${ROTATION_OVERLAP_DAYS}-day overlap is known`,
        tenant,
      );
      continue;
    }
    const endsAt = overlapEndsAt(rotatedAt);
    if (endsAt !== undefined && now > endsAt) {
      warn(
        'secret-overlap',
        previousPath,
        `previousClientSecret is still configured more than ${ROTATION_OVERLAP_DAYS} days after secretRotatedAt (${rotatedAt}): the rotation overlap has ended; remove it (and revoke the old secret)`,
        tenant,
      );
    }
  }

  for (const ref of secretFileRefs(config)) {
    if (!trackedSecretFiles.has(ref.file)) continue;
    warn(
      'secret-in-git',
      ref.path,
      `secret file ${ref.file} is inside the repository and tracked by git: credentials belong in a secrets manager, not in source control; remove it (git rm --cached) and rotate the secret`,
      ref.tenant,
    );
  }
  return diagnostics.sort(compareDiagnostics);
}
