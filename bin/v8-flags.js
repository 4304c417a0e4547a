// The V8 flags the CLI sets for itself at start (bin/contract-sync.js), by V8 version. A flag given
// to node itself (on its command line or in NODE_OPTIONS) wins. bench/plan-scale.ts also measures
// its yardstick under them.
//
// Node 20's V8 (11.3) has no tier between its baseline compiler and TurboFan, and optimizes a
// function with TurboFan once it has run some 66 KB of bytecode. One run of the CLI executes a lot
// of code a few thousand times (parsing, validation, the diff, the state store, the output), so in
// a plan of 10,000 contracts TurboFan took about a quarter of the CPU (perf), compiling code that
// then ran for milliseconds. With a budget of 600,000 bytes only code that runs long is optimized:
// on Node 20 a plan of 10,000 contracts uses 8-14 % less CPU (validate 4 %), a pull request's plan
// 20-30 % less. Long runs pay a little: a plan of 100,000 contracts with --out about 4 % more (a
// bare js-yaml parse of its files 25 % more), so the flag suits the runs most people make, not
// every run. Node 24's V8 (13.6) tiers through Maglev by invocation counts; raising those saved
// nothing there (measured), so other versions are left as they are.
//
// Node 24's V8 lets the young generation grow to semi-spaces of 64 MiB where memory allows (Node
// 20's: 16 MiB), and a run that keeps a tenant's contracts while it makes more fills them: its peak
// RSS was about 1.5x Node 20's. With --max-semi-space-size=8 (MiB), in paired runs on Node 24 (block style; medians of
// each round's CPU ratio to the run without it; on a shared machine a round's ratio moved by about
// 5 %, a few by 10 %):
//   10,000 contracts, 3 rounds: validate 0.93x CPU, 180 -> 133 MiB; plan 0.98x, 179 -> 136 MiB;
//     plan --out 0.97x, 178 -> 139 MiB; plan --format json | slow pipe 0.96x, 179 -> 135 MiB;
//     plan --full with a populated store 0.92x, 176 -> 145 MiB;
//   100,000 contracts, 2 rounds: validate 0.97x, 417-419 -> 241-246 MiB; plan 0.93x, 424-425 ->
//     227-312 MiB; plan --out 1.01x, 381-419 -> 296-309 MiB; json | slow pipe 0.99x, 392-405 ->
//     245-306 MiB;
//   100,000 contracts in one tenant, 2-5 rounds: plan, --out and json | slow pipe 0.98-1.02x,
//     531-556 -> 435-445 MiB; validate 0.97-1.11x (median 1.07x), 533-537 -> 420-423 MiB;
// these include the cost of starting node twice (below). 16 MiB saved less memory and little or no
// CPU (10,000: 0.96-1.04x, 146-153 MiB; 100,000: 0.98-1.01x, 260-340 MiB; one tenant's validate
// 1.07x); 32 MiB nothing at 10,000. Keeping the semi-spaces at their first 1 MiB
// (--semi-space-growth-factor=1, which V8 does read while it runs) cost 4-8 % more CPU for 155-161
// MiB. On Node 20 the default is kept.
//
// V8 sizes its heap once, when node starts: v8.setFlagsFromString('--max-semi-space-size=8') at
// the bin's start leaves the young generation as it was (measured: 178 MiB, as without). So such a
// flag is a start flag: the bin starts node again with it (process.execve, the same process with
// its pid, stdio and signals; Node >= 22.15 and not on Windows), before it loads anything else.
// That second start costs about 30 ms of CPU (a validate of 100 contracts: 0.10 -> 0.135 s), so
// only the runs that read a repository or a service's contracts are started again (validate, plan
// without --base, apply, drift, import); a pull request's plan, --version and the other commands
// run as they are. Give the flag to node yourself (NODE_OPTIONS=--max-semi-space-size=N, any N)
// to keep the first process, or to choose another size.

/** The commands (as bin/code-cache.js's cacheNameOf names them) worth starting node again for. */
const RESTARTED = new Set(['validate', 'plan', 'apply', 'drift', 'import']);

/**
 * The V8 flags the bin sets while it runs (v8.setFlagsFromString), by V8 version.
 * @param {string} v8Version process.versions.v8
 * @returns {string[]}
 */
export function cliV8Flags(v8Version) {
  return v8Version.startsWith('11.') ? ['--interrupt-budget=600000'] : [];
}

/**
 * The V8 flags that take effect only when node starts with them (they size the heap), by V8 version.
 * @param {string} v8Version process.versions.v8
 * @returns {string[]}
 */
export function cliStartFlags(v8Version) {
  return v8Version.startsWith('13.') ? ['--max-semi-space-size=8'] : [];
}

/** A flag's name as V8 reads it: `--max_semi_space_size=8` and `--max-semi-space-size` are one. */
function flagName(arg) {
  return arg.split('=')[0].replaceAll('_', '-');
}

/**
 * The node options to start node again with for this run (cliStartFlags, then the ones it has), or
 * undefined when it runs as it is: no start flag for this V8, each given to node already (on its
 * command line or in NODE_OPTIONS), a command not worth a second start, or a debugger attached.
 * @param {{ readonly v8Version: string, readonly execArgv: readonly string[], readonly nodeOptions: string | undefined, readonly command: string }} run
 *   command: the run's, as cacheNameOf names it
 * @returns {string[] | undefined}
 */
export function restartOptions({ v8Version, execArgv, nodeOptions, command }) {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map(flagName);
  if (!RESTARTED.has(command) || given.some((name) => name.startsWith('--inspect'))) return undefined;
  const missing = cliStartFlags(v8Version).filter((flag) => !given.includes(flagName(flag)));
  return missing.length === 0 ? undefined : [...missing, ...execArgv];
}
