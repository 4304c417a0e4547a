/**
 * Function calls that try first the overload that answered them last. cel-go chooses a call's
 * overload when it type-checks the expression; @bufbuild/cel 0.6.1 chooses it at every
 * evaluation: the function's group (resolver.js) tries each overload of the name in order, and
 * each compares the CEL type of every argument with its own (func.js). `>=` has 14 overloads with
 * the timestamps' last, so one `timestamp(a) >= timestamp(b)` computed 15 CEL types (the first
 * argument's for each overload before, both for the last), each of a Timestamp allocating one, on
 * every contract whose dates the memo (engine/policy/memo.ts) had not seen.
 *
 * The planner asks the environment's resolver for a group once per call in the expression
 * (planner.js, planCall), so a group handed out per `find` belongs to one call site. This one
 * remembers the overload that answered there, and tries it first; the answer is the library's:
 *
 * Matching depends on the arguments' CEL types alone: an overload matches when the call has a
 * target exactly if the overload is a method, the number of arguments is its own, and each
 * argument (and the target) is either declared `dyn` or has a CEL type of the kind and name
 * declared (func.js isSubtypeOf, equals.js equalsType); whether it matches has no side effect, and
 * a match always answers (a value, or an error when the implementation throws). The group answers
 * with the first overload, in its order, that matches. Let F be an overload without `dyn` that was
 * the first to match some arguments A, and let it match arguments B at the same call site. Then
 * each of B's types has the kind and name F declares, which are those of A's: A and B have the
 * same types, position by position, and the same arity and target. Every overload before F, which
 * did not match A, does not match B either. So F is the first match of B: the group would answer
 * with F too. (With a `dyn` in F, B may differ from A where F says `dyn`, and an overload before F
 * that names that type may match B: such an F is not remembered.) The argument holds for any F that
 * was once a first match, so F stays remembered while calls of other types are answered by others.
 *
 * The group also unwraps arguments that are google.protobuf.Any messages before matching (a
 * rule's values never are; a binding could be): a call with an Any argument or target goes
 * to the library's group unchanged. Any other call matches what the library's group would, since
 * it unwraps only Any. The cost measured is in docs/policies.md ("What a rule may cost").
 */
import type { CelEnv, CelFunc, CelResult, CelValue } from '@bufbuild/cel';
import { CelScalar } from '@bufbuild/cel';
import { isReflectMessage } from '@bufbuild/protobuf/reflect';
import { AnySchema } from '@bufbuild/protobuf/wkt';

type FuncResolver = CelEnv['funcs'];
type FuncGroup = NonNullable<ReturnType<FuncResolver['find']>>;

/** Whether `func` declares no `dyn` (the proof above holds for it), compared as the library does, by identity. */
function fixedTypes(func: CelFunc): boolean {
  return func.target !== CelScalar.DYN && !func.arguments.includes(CelScalar.DYN);
}

function holdsAny(target: CelValue | undefined, args: readonly CelValue[]): boolean {
  if (target !== undefined && isReflectMessage(target, AnySchema)) return true;
  for (const arg of args) if (isReflectMessage(arg, AnySchema)) return true;
  return false;
}

/** One call site's group: the library's, with the overload that answered last (among those without `dyn`) tried first. */
class CallSite implements FuncGroup {
  readonly #inner: FuncGroup;
  readonly #overloads: readonly CelFunc[];
  #last: CelFunc | undefined;

  constructor(inner: FuncGroup) {
    this.#inner = inner;
    this.#overloads = [...inner];
  }

  get name(): string {
    return this.#inner.name;
  }

  [Symbol.iterator](): IterableIterator<CelFunc> {
    return this.#inner[Symbol.iterator]();
  }

  call(id: number, target: CelValue | undefined, args: CelValue[]): CelResult | undefined {
    if (holdsAny(target, args)) return this.#inner.call(id, target, args);
    const last = this.#last;
    if (last !== undefined) {
      let result: CelResult | undefined;
      try {
        result = last.call(id, target, args);
      } catch {
        // Only reading a type throws here (a value that is not CEL's): the library's group says what that gives.
        return this.#inner.call(id, target, args);
      }
      if (result !== undefined) return result;
    }
    // The library group's own loop; its unwrapping of Any leaves these arguments as they are.
    for (const overload of this.#overloads) {
      const result = overload.call(id, target, args);
      if (result === undefined) continue;
      if (fixedTypes(overload)) this.#last = overload;
      return result;
    }
    return undefined;
  }
}

/**
 * `environment` as @bufbuild/cel's `plan` reads it (its functions, registry and namespace), with
 * functions that give each call site a group of its own: the planner asks for one as it meets each
 * call, so one such environment serves any number of expressions.
 */
export function withCallSites(environment: CelEnv): CelEnv {
  const inner = environment.funcs;
  const funcs = {
    // The library's mark of a resolver, so that createResolver would take this one as one too.
    [Symbol.for('@bufbuild/cel/resolver')]: {},
    [Symbol.iterator]: () => inner[Symbol.iterator](),
    find(name: string): FuncGroup | undefined {
      const group = inner.find(name);
      return group === undefined ? undefined : new CallSite(group);
    },
  };
  // CelEnv and FuncResolver carry a private symbol in their types that nothing outside the library can name.
  return {
    [Symbol.for('@bufbuild/cel/env')]: {},
    namespace: environment.namespace,
    registry: environment.registry,
    variables: environment.variables,
    funcs: funcs as unknown as FuncResolver,
  } as unknown as CelEnv;
}
