/**
 * The `$schema` line's target: a relative path from the file written (by init or import) to the
 * schema in the specs/ of the contract-sync that runs, wherever it is installed, so that an editor
 * finds it from `init --dir SUBDIR` and `import --out SUBDIR/...` too. The project serves no web
 * address for its schemas.
 */
import path from 'node:path';
import { PACKAGE_NAME, packageRoot } from '../package/package-root.ts';

/** `../node_modules/contract-sync/specs/config.schema.json`: from the directory `fileDir` to `specsDir/name`, `/`-separated. Pure. */
export function relativeSchemaPath(fileDir: string, specsDir: string, name: string): string {
  const relative = path.relative(fileDir, path.join(specsDir, name)).split(path.sep).join('/');
  return relative.startsWith('.') ? relative : `./${relative}`;
}

/** The `$schema` target for a file in `fileDir` (absolute): the schema `name` of this contract-sync's specs/. */
export function schemaReference(fileDir: string, name: string): string {
  return relativeSchemaPath(fileDir, path.join(packageRoot(), 'specs'), name);
}

/**
 * Whether this contract-sync is installed for the repository at `root` (in `node_modules` of the
 * root or of a directory above it, as npm resolves it), rather than run from elsewhere (a global
 * install, npx's cache or a source checkout).
 */
export function installedFor(root: string, packageDir: string = packageRoot()): boolean {
  const parent = path.dirname(packageDir);
  if (path.basename(parent) !== 'node_modules' || path.basename(packageDir) !== PACKAGE_NAME) return false;
  const relative = path.relative(path.dirname(parent), path.resolve(root));
  return !relative.startsWith('..') && !path.isAbsolute(relative);
}
