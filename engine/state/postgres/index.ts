export { describePostgresError, PostgresStateError, type PostgresTarget } from './errors.ts';
export { SCHEMA_VERSION, SchemaVersionError } from './schema.ts';
export { DEFAULT_SCHEMA, openPostgresStateStore, postgresTargetOf, type PostgresStateStore, type PostgresStateStoreOptions } from './store.ts';
