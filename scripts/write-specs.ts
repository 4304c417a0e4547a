// Writes specs/*.schema.json from the model table and the config schema (npm run specs).
import { writeFile } from 'node:fs/promises';
import { generatedSpecs, serialiseSpec } from '../engine/specs.ts';

for (const [name, schema] of Object.entries(generatedSpecs())) {
  await writeFile(new URL(`../specs/${name}`, import.meta.url), serialiseSpec(schema));
  console.log(`wrote specs/${name}`);
}
