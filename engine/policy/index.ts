// compile.ts is left out on purpose: it loads the CEL library, which run/config.ts imports only for a config with rules.
export { evaluateChangePolicies, evaluateContractPolicies, evaluatePolicy, type EvaluateOptions, type PolicyChange, type PolicyContract } from './evaluate.ts';
export { utcDate, withException } from './exceptions.ts';
export { describeException, findingAsDiagnostic, findingFails } from './finding-diagnostic.ts';
export { NO_POLICIES, type CompiledPolicies, type CompiledPolicy } from './types.ts';
