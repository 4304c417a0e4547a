/**
 * The package's version, read from its package.json. Found by walking up from this file, because
 * the relative path differs between the sources (engine/cli/) and the build (dist/engine/cli/).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'contract-sync';

function findPackageJson(from: string): { name?: unknown; version?: unknown } {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // No package.json at this level: keep walking up.
    }
    if (text !== undefined) {
      const json = JSON.parse(text) as { name?: unknown; version?: unknown };
      if (json.name === PACKAGE_NAME) return json;
    }
    if (path.dirname(dir) === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${from}`);
  }
}

/** The `version` field of contract-sync's own package.json. */
export function packageVersion(): string {
  return String(findPackageJson(path.dirname(fileURLToPath(import.meta.url))).version);
}
