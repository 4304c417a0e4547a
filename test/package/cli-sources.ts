// The CLI run from its TypeScript sources, for tests that start it in a child process with their
// own `--import` hooks (bin/contract-sync-dev.js registers tsx itself, after them).
import { runCli } from '../../engine/cli/main.ts';

await runCli();
