// `node --import ./record-module-loads.mjs ...`: appends the URL of every module the process
// resolves (ESM imports, dynamic import()) to the file named by RECORD_MODULE_LOADS, one per line.
// Registered after any loader given before it (tsx), so it sees the final URLs.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

let out;

export function initialize(data) {
  out = data.out;
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  appendFileSync(out, `${result.url}\n`);
  return result;
}

if (isMainThread && process.env.RECORD_MODULE_LOADS) {
  register(import.meta.url, { data: { out: process.env.RECORD_MODULE_LOADS } });
}
