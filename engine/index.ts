// The library's public surface: `import { ... } from 'contract-sync'`.
export * from './api/index.ts';
export * from './apply/index.ts';
export * from './auth/index.ts';
export { systemClock, type Clock } from './io/clock.ts';
export * from './config/index.ts';
export * from './desired/index.ts';
export type { Diagnostic } from './diagnostic/diagnostic.ts';
export * from './drift/index.ts';
export * from './git/index.ts';
export { createLogger, Redactor, silentLogger, type Logger } from './log/logger.ts';
export * from './model/index.ts';
export * from './pipeline/index.ts';
export * from './plan/index.ts';
export * from './run/index.ts';
export { generatedSpecs } from './package/specs.ts';
export * from './state/index.ts';
