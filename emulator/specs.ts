/** The emulator's published schemas, by file name in specs/; `npm run specs` writes them, a test keeps them equal. */
import type { JsonSchema } from '../engine/model/index.ts';
import { seedSchema } from './seed-schema.ts';

export function emulatorSpecs(): Record<string, JsonSchema> {
  return { 'emulator-seed.schema.json': seedSchema() };
}
