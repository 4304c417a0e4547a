/** The JSON Schemas published in specs/, by file name; `npm run specs` writes them, a test keeps them equal. */
import { configSchema } from '../config/schema.ts';
import type { JsonSchema } from '../model/json-schema-type.ts';
import { contractsFileSchema, patchSchema } from '../model/json-schemas.ts';
import { contractReadSchema } from '../model/read-schema.ts';
import { planSchema } from '../plan/schema.ts';

export function generatedSpecs(): Record<string, JsonSchema> {
  return {
    'contracts.schema.json': contractsFileSchema(),
    'contract-read.schema.json': contractReadSchema(),
    'config.schema.json': configSchema(),
    'patch.schema.json': patchSchema(),
    'plan.schema.json': planSchema(),
  };
}

export function serialiseSpec(schema: JsonSchema): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
