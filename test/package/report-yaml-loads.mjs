// `node --import ./report-yaml-loads.mjs ...`: when the process exits, writes the modules of the
// `yaml` package it loaded, one per line, to the file named by REPORT_YAML_LOADS. yaml is a
// CommonJS package: `import 'yaml'` and `createRequire(...)('yaml')` both enter its modules in the
// CommonJS module cache, which a resolve hook would not see for the latter.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const out = process.env.REPORT_YAML_LOADS;

if (out) {
  process.on('exit', () => {
    const loaded = Object.keys(require.cache).filter((file) => file.replaceAll('\\', '/').includes('/node_modules/yaml/'));
    writeFileSync(out, loaded.map((file) => `${file}\n`).join(''));
  });
}
