// The V8 flags the CLI sets for itself at start (bin/contract-sync.js), by V8 version. A flag given
// to node itself wins. bench/plan-scale.ts also measures its yardstick under them.
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
export function cliV8Flags(v8Version) {
  return v8Version.startsWith('11.') ? ['--interrupt-budget=600000'] : [];
}
