export { compilePolicies, NO_POLICIES, positionInFile, type CompiledPolicies, type CompiledPolicy, type CompileResult } from './compile.ts';
export { evaluateChangePolicies, evaluateContractPolicies, evaluatePolicy, type EvaluateOptions, type PolicyChange, type PolicyContract } from './evaluate.ts';
export { utcDate, withException } from './exceptions.ts';
export { describeException, findingAsDiagnostic, findingFails } from './finding-diagnostic.ts';
