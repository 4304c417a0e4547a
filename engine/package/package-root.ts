/**
 * Where contract-sync's own package is: the directory of its package.json, found by walking up
 * from this module, because the relative path differs between the sources (engine/), the build
 * (dist/engine/) and the CLI bundle (dist/cli/).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_NAME = 'contract-sync';

/** The directory holding contract-sync's package.json, at or above `from`. */
export function packageRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    let text: string | undefined;
    try {
      text = readFileSync(path.join(dir, 'package.json'), 'utf8');
    } catch {
      // No package.json at this level: keep walking up.
    }
    if (text !== undefined && (JSON.parse(text) as { name?: unknown }).name === PACKAGE_NAME) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${from}`);
  }
}

/** contract-sync's package.json. */
export function packageManifest(): { readonly name?: unknown; readonly version?: unknown } {
  return JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
}
