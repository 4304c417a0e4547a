/**
 * What a child process used, as the benches measure the CLI: `node --import CHILD_USAGE_PRELOAD ...`
 * writes the child's process.resourceUsage() to $BENCH_USAGE_FILE when it exits. maxRSS is in KiB,
 * CPU times in µs. On Linux, /proc/self/stat adds the CPU of the children it waited for (git), in
 * clock ticks of 1/100 s. The 'exit' event also comes after an uncaught error; not after a fatal
 * V8 error (out of memory), which then has no figures.
 */
import { existsSync, readFileSync } from 'node:fs';

const PRELOAD = `
import { readFileSync, writeFileSync } from 'node:fs';
const file = process.env.BENCH_USAGE_FILE;
if (file) process.on('exit', () => {
  const usage = process.resourceUsage();
  let childrenCpuUs = 0;
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    childrenCpuUs = (Number(fields[13]) + Number(fields[14])) * 10000;
  } catch {}
  writeFileSync(file, JSON.stringify({ maxRssKiB: usage.maxRSS, cpuUs: usage.userCPUTime + usage.systemCPUTime + childrenCpuUs }));
});`;

/** Give to node as `--import CHILD_USAGE_PRELOAD`, with BENCH_USAGE_FILE in its environment. */
export const CHILD_USAGE_PRELOAD = `data:text/javascript,${encodeURIComponent(PRELOAD)}`;

export interface ChildUsage {
  readonly maxRssKiB: number;
  readonly cpuUs: number;
}

/** What the child wrote to `file`, or undefined when it wrote nothing (it died of a fatal error). */
export function readChildUsage(file: string): ChildUsage | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ChildUsage) : undefined;
}
