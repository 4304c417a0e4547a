// Runs the CLI's bundle with a V8 code cache of what earlier runs compiled, not only its top level.
//
// Node's compile cache (module.enableCompileCache, Node >= 22.1) stores a module's code as V8 has
// it right after compiling it: the top-level code, and no function, since V8 compiles a function
// when it is first called. Every run then compiles again every function it calls: in a pull
// request's plan that was about 15 % of the CPU. V8 can also serialize a script's code after it has
// run, with the functions compiled by then (vm.Script#createCachedData; nodejs/node#20052, and V8's
// "improved code caching", which Chrome does the same way). So the bundle is one CommonJS file
// (scripts/bundle-cli.ts), compiled here as a vm.Script, and the first run of a command that finds
// no cache it can use writes one at its exit, with the functions that run compiled.
//
// The cache is a file per command, and one for a pull request's plan (what `plan` compiles is not
// what `apply` or the emulator do, nor what `plan --base` does: see cacheNameOf; a cache holds
// the functions of the run that wrote it), Node version, architecture and V8 flags,
// in a directory of its own under NODE_COMPILE_CACHE or the system's temporary directory;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's. Its header holds the CRC-32 and
// length of the bundle it was made from (V8 itself checks only the source's length, and a cache of
// another bundle must never run) and the CRC-32 of the cached data (V8 checks its own only in debug
// builds, and a file damaged on disk must not reach it), as Node's compile cache does. A directory
// that is not the user's own, or that others may write to, is not used: a cache is code.
//
// Node's modules are taken with process.getBuiltinModule, not imported: importing one into an ES
// module makes its ES module facade, which reads every export, and node:fs's getters then load
// its file streams, which no run of the CLI uses.
const { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { createRequire } = process.getBuiltinModule('node:module');
const { tmpdir } = process.getBuiltinModule('node:os');
const path = process.getBuiltinModule('node:path');
const vm = process.getBuiltinModule('node:vm');
const { crc32 } = process.getBuiltinModule('node:zlib');

const MAGIC = 0x63736363; // "cscc"
const FORMAT = 1;
const HEADER_BYTES = 20;

/** The CLI's commands, as engine/cli/main.ts names them (test/package/code-cache.test.ts compares). */
export const COMMANDS = new Set(['validate', 'plan', 'apply', 'drift', 'import', 'show', 'emulator', 'state', 'notify', 'policy', 'init']);

/**
 * The name of the code cache a run with these arguments uses: its command's, or, for `--version`,
 * `--help` or a mistyped command, which run little of the bundle, `cli`. A pull request's plan
 * (`plan --base`) has one of its own: it runs git and the comparison with the base where other
 * plans parse and diff every contract, and with a cache written by a plan of the whole repository
 * it used as much CPU as with none (16 % and 20 % more than with its own; 100 tenants, Node 24).
 * @param {readonly string[]} argv
 * @returns {string}
 */
export function cacheNameOf(argv) {
  const [command] = argv;
  if (command === undefined || !COMMANDS.has(command) || argv.includes('--help') || argv.includes('-h')) return 'cli';
  return command === 'plan' && argv.some((arg) => arg === '--base' || arg.startsWith('--base=')) ? 'plan-base' : command;
}

/**
 * The directory for the code cache, or undefined when it is turned off.
 * @param {Readonly<Record<string, string | undefined>>} env
 * @param {number | undefined} uid the user's id (process.getuid?.()), in the name: one directory per user.
 * @returns {string | undefined}
 */
export function codeCacheDir(env, uid) {
  if (env.NODE_DISABLE_COMPILE_CACHE === '1') return undefined;
  const base = env.NODE_COMPILE_CACHE || tmpdir();
  return path.join(base, `contract-sync-code-cache${uid === undefined ? '' : `-${uid}`}`);
}

/**
 * The cache file's name: V8 rejects a cache made by another V8 or under other flags, so each gets
 * its own file rather than one that they would take turns overwriting.
 * @param {string} name the command's
 * @param {readonly string[]} v8Flags the flags the bin set (bin/v8-flags.js)
 */
function cacheFileName(name, v8Flags) {
  const flags = [...process.execArgv, ...v8Flags].join('\0');
  return `${name}-${process.version}-${process.arch}-${crc32(flags).toString(16).padStart(8, '0')}.bin`;
}

/**
 * 'trusted' when `dir` is a directory of this user that no one else may write to (where there are
 * no user ids, Windows, being a directory is enough), 'missing' when there is nothing there yet.
 * @param {string} dir
 * @returns {'trusted' | 'missing' | 'untrusted'}
 */
function trustOf(dir) {
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    return 'missing';
  }
  if (!stat.isDirectory()) return 'untrusted';
  const uid = process.getuid?.();
  return uid === undefined || (stat.uid === uid && (stat.mode & 0o022) === 0) ? 'trusted' : 'untrusted';
}

/**
 * The cached data in `file` when it was made from a source with this stamp and is whole, else undefined.
 * @param {string} file
 * @param {{ crc: number, length: number }} stamp
 */
function readCache(file, stamp) {
  let bytes;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  if (bytes.length <= HEADER_BYTES) return undefined;
  const data = bytes.subarray(HEADER_BYTES);
  const matches =
    bytes.readUInt32LE(0) === MAGIC &&
    bytes.readUInt32LE(4) === FORMAT &&
    bytes.readUInt32LE(8) === stamp.crc &&
    bytes.readUInt32LE(12) === stamp.length &&
    bytes.readUInt32LE(16) === crc32(data);
  return matches ? data : undefined;
}

/**
 * Writes the cache whole or not at all (a temporary file renamed over it), so that a run reading it
 * meanwhile sees the old one or the new one. A failure (a read-only disk, a full one) only means no
 * cache: the CLI runs as it would without.
 * @param {string} dir
 * @param {string} file
 * @param {{ crc: number, length: number }} stamp
 * @param {Buffer} data
 */
function writeCache(dir, file, stamp, data) {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(MAGIC, 0);
  header.writeUInt32LE(FORMAT, 4);
  header.writeUInt32LE(stamp.crc, 8);
  header.writeUInt32LE(stamp.length, 12);
  header.writeUInt32LE(crc32(data), 16);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (trustOf(dir) !== 'trusted') return;
    writeFileSync(temporary, Buffer.concat([header, data]), { mode: 0o600 });
  } catch {
    return; // No cache this time.
  }
  try {
    renameSync(temporary, file);
  } catch {
    rmSync(temporary, { force: true });
  }
}

/**
 * Runs the CommonJS file `file` (the CLI's bundle) and returns its exports, and what became of the
 * code cache called `name`: 'off' (no name, turned off, or a directory that is not safe to use),
 * 'none' (no cache yet, or one of another bundle), 'accepted', or 'rejected' (V8 refused it). When
 * it is 'none' or 'rejected', the process writes a new cache when it exits.
 * @param {string} file
 * @param {{ cacheDir: string | undefined, name: string | undefined, v8Flags?: readonly string[] }} options
 * @returns {{ exports: Record<string, unknown>, cache: 'off' | 'none' | 'accepted' | 'rejected' }}
 */
export function runBundle(file, { cacheDir, name, v8Flags = [] }) {
  const bytes = readFileSync(file);
  const stamp = { crc: crc32(bytes), length: bytes.length };
  const usable = cacheDir !== undefined && name !== undefined && trustOf(cacheDir) !== 'untrusted';
  const cacheFile = usable ? path.join(cacheDir, cacheFileName(name, v8Flags)) : undefined;
  const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile, stamp);
  // CommonJS's own wrapper, on the source's first line: line numbers in stack traces stay the file's.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${bytes.toString('utf8')}\n})`;
  const script = new vm.Script(wrapped, { filename: file, cachedData });
  const cache = cacheFile === undefined ? 'off' : cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted';
  if (cacheFile !== undefined && cache !== 'accepted') {
    process.once('exit', () => writeCache(/** @type {string} */ (cacheDir), cacheFile, stamp, script.createCachedData()));
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file));
  return { exports: module.exports, cache };
}
