export { parseConfig, type ConfigResult } from './parse.ts';
export { readConfig } from './read.ts';
export { configSchema } from './schema.ts';
export { DEFAULTS, type AuthConfig, type CollectionMode, type Config, type SecretRef, type StateConfig, type TenantConfig } from './types.ts';
export { describeSecretRef, resolveSecret, SecretError, type SecretSources } from './secrets.ts';
