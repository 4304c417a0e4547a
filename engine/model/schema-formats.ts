/** The string formats of the specs, as Ajv format definitions: shared by the runtime validator and the build's precompiled ones. */
import { isUtcTimestamp } from './normalise.ts';

export const SCHEMA_FORMATS = {
  // Timestamps of the service are ISO 8601 in UTC; offsets and date-only values are refused.
  'date-time': { type: 'string', validate: isUtcTimestamp },
  date: { type: 'string', validate: (text: string) => isUtcTimestamp(`${text}T00:00:00Z`) },
  uri: { type: 'string', validate: (text: string) => URL.canParse(text) },
} as const;
