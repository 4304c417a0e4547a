// The library's public surface: `import { ... } from 'contract-sync'`.
export * from './config/index.ts';
export * from './desired/index.ts';
export type { Diagnostic } from './diagnostic.ts';
export * from './model/index.ts';
export * from './plan/index.ts';
export { generatedSpecs } from './specs.ts';
export * from './state/index.ts';
