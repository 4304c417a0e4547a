/** The package's version, read from its package.json (engine/package/package-root.ts finds it). */
import { packageManifest } from '../package/package-root.ts';

/** The `version` field of contract-sync's own package.json. */
export function packageVersion(): string {
  return String(packageManifest().version);
}
