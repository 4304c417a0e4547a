/**
 * Imported just before oidc-provider (emulator/identity-provider.ts): on Node 20, loading it prints
 * "oidc-provider WARNING: Unsupported runtime. Use Node.js v22.x LTS, ..." on every emulator start.
 * contract-sync supports Node 20.19 and later (package.json `engines`), and the emulator's
 * identity provider is tested end to end on Node 20: the warning says nothing a user can act on,
 * so that one line, and only it, is dropped while oidc-provider loads. restoreWarnings() puts
 * console.warn back as soon as it has loaded; any other warning meanwhile is printed as usual.
 */
const UNSUPPORTED_RUNTIME = 'oidc-provider WARNING: Unsupported runtime.';

const original = console.warn;

console.warn = function warnUnlessUnsupportedRuntime(...args: unknown[]): void {
  if (typeof args[0] === 'string' && args[0].includes(UNSUPPORTED_RUNTIME)) return;
  original.apply(console, args);
};

/** console.warn as it was before oidc-provider loaded. */
export function restoreWarnings(): void {
  console.warn = original;
}
