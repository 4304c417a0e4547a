export * from './fields.ts';
export type { JsonSchema } from './json-schema-type.ts';
export * from './apply-ops.ts';
export * from './json-schemas.ts';
export { completeMember, identityMemberSchema, missingMemberFields, storedMemberSchema } from './members.ts';
export * from './normalise.ts';
export { contractReadSchema, readContract, type ReadContract } from './read-schema.ts';
export { compileSchema, describeValue, type PathSegment, type SchemaCheck, type SchemaIssue } from './schema-validator.ts';
export type * from './types.ts';
