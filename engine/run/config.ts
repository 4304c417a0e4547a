/** The engine config of a run: `--config` / `--repo` (and `--ref`), resolved the same way by every run that reads a repository. */
import path from 'node:path';
import { CONFIG_FILE_NAME, configNotFoundMessage, findConfig } from '../config/find.ts';
import { parseConfig } from '../config/parse.ts';
import { readConfig } from '../config/read.ts';
import type { Config } from '../config/types.ts';
import { compareDiagnostics, type Diagnostic } from '../diagnostic/diagnostic.ts';
import type { GitRepository } from '../git/repository.ts';
import { NO_POLICIES, type CompiledPolicies } from '../policy/types.ts';
import { readFileAtCommit } from './git-source.ts';
import type { RunPlace } from './types.ts';

export interface RepoConfig {
  /** Absolute path of the repository. */
  readonly repoDir: string;
  /** The config file as shown in messages: relative to the working directory. */
  readonly configFile: string;
  /** Undefined when the config has errors; `diagnostics` says why. */
  readonly config?: Config;
  /** The config's rules, compiled (none when it has none); present with `config`. */
  readonly policies?: CompiledPolicies;
  readonly diagnostics: Diagnostic[];
}

/**
 * The config's rules are compiled once, as the config is read: a rule that does not compile makes
 * the config invalid, at the expression's line and column. The CEL library (a quarter of a second
 * to load) is loaded only for a config that has rules.
 */
async function withPolicies(repoConfig: RepoConfig): Promise<RepoConfig> {
  const { config } = repoConfig;
  if (config === undefined) return repoConfig;
  if (config.policies === undefined && config.policyExceptions === undefined) return { ...repoConfig, policies: NO_POLICIES };
  const { compilePolicies } = await import('../policy/compile.ts');
  const compiled = compilePolicies(repoConfig.configFile, config);
  if (compiled.policies === undefined) {
    const { config: _invalid, ...rest } = repoConfig;
    return { ...rest, diagnostics: [...repoConfig.diagnostics, ...compiled.diagnostics].sort(compareDiagnostics) };
  }
  return { ...repoConfig, policies: compiled.policies };
}

/** With `--ref` and no `--config`: the config is read from git objects at this commit. */
export interface ConfigAtRef {
  readonly repository: GitRepository;
  readonly commit: string;
  /** As given, for messages. */
  readonly ref: string;
}

export { CONFIG_FILE_NAME };

/** A file --config (or CONTRACT_SYNC_CONFIG, engine/cli/environment-args.ts) names but that is not there. */
function named(d: Diagnostic): Diagnostic {
  return d.code === 'config-missing' && d.message.startsWith('config file not found')
    ? { ...d, message: 'config file not found (named by --config or CONTRACT_SYNC_CONFIG)' }
    : d;
}

function missing(file: string, message: string): Diagnostic {
  return { severity: 'error', code: 'config-missing', file, line: 1, column: 1, field: '', message };
}

/**
 * The config defaults to `DIR/contract-sync.yaml`; both are relative to the working directory.
 * With `at` and no `--config`, `DIR/contract-sync.yaml` is read at that commit, like the desired
 * state (Terraform and Argo CD read config from the revision they deploy); `--config FILE` is
 * always a file of the working tree, for CI that keeps its settings outside the branch.
 */
export async function readRepoConfig(
  place: Pick<RunPlace, 'cwd'>,
  options: { readonly config?: string; readonly repo: string },
  at?: ConfigAtRef,
): Promise<RepoConfig> {
  const repoDir = path.resolve(place.cwd, options.repo);
  const configFile = path.relative(place.cwd, path.resolve(place.cwd, options.config ?? path.join(options.repo, CONFIG_FILE_NAME)));
  if (at !== undefined && options.config === undefined) {
    const file = await readFileAtCommit(at.repository, at.commit, CONFIG_FILE_NAME);
    if (!file)
      return { repoDir, configFile, diagnostics: [missing(configFile, `config file not found at ${at.ref} (commit it there, or pass --config FILE)`)] };
    const result = parseConfig(configFile, file.content);
    return withPolicies({ repoDir, configFile, config: result.config, diagnostics: result.diagnostics.map((d) => ({ ...d, file: configFile })) });
  }
  if (options.config === undefined) {
    // The default file is missing: say where contract-sync looked (engine/config/find.ts), and what to do.
    const search = await findConfig(repoDir);
    if (search.found !== path.resolve(place.cwd, configFile)) {
      return {
        repoDir,
        configFile,
        diagnostics: [
          missing(
            configFile,
            configNotFoundMessage(search, (file) => path.relative(place.cwd, file) || '.'),
          ),
        ],
      };
    }
  }
  const result = await readConfig(path.resolve(place.cwd, configFile));
  return withPolicies({ repoDir, configFile, config: result.config, diagnostics: result.diagnostics.map((d) => named({ ...d, file: configFile })) });
}
