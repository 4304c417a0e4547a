// Writes specs/*.schema.json from the model table, the config schema and the emulator (npm run specs).
import { writeFile } from 'node:fs/promises';
import { emulatorSpecs } from '../emulator/specs.ts';
import { generatedSpecs, serialiseSpec } from '../engine/package/specs.ts';

for (const [name, schema] of Object.entries({ ...generatedSpecs(), ...emulatorSpecs() })) {
  await writeFile(new URL(`../specs/${name}`, import.meta.url), serialiseSpec(schema));
  console.log(`wrote specs/${name}`);
}
