import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests import the library as users do (`from 'contract-sync'`); here that is the sources, not dist/.
  resolve: { alias: [{ find: /^contract-sync$/, replacement: fileURLToPath(new URL('engine/index.ts', import.meta.url)) }] },
  test: {
    include: ['test/**/*.test.ts'],
    // The JSON report lets .ci/run print a plain "N passed, N failed" line (VITEST_JSON: another file, for a second Node).
    reporters: ['default', ['json', { outputFile: process.env.VITEST_JSON ?? 'reports/vitest.json' }]],
    testTimeout: 20_000,
  },
});
