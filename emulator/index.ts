export { startEmulator, type Emulator, type EmulatorOptions, type EmulatorUrls } from './server.ts';
export {
  parseSeed,
  readSeedFile,
  resolveSeed,
  SeedError,
  type ResolvedSeed,
  type Seed,
  type SeedBehaviours,
  type SeedClient,
  type SeedTenant,
} from './seed.ts';
export { seedSchema } from './seed-schema.ts';
export { faultSchema, validateFaults, type FaultConfig, type InjectedFault } from './faults.ts';
export type { RequestLogEntry } from './request-log.ts';
