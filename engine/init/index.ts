export { ACTION_REF, CI_NODE_VERSION } from './ci-templates.ts';
export {
  CI_PROVIDERS,
  ciFilePath,
  CONFIG_FILE,
  contractsFilePath,
  GITIGNORE_ENTRIES,
  GITIGNORE_FILE,
  mergeGitignore,
  scaffoldRepository,
  STATE_DIR,
  tenantNameProblem,
  tenantNames,
  type CiProvider,
  type ScaffoldFile,
  type ScaffoldOptions,
  type TenantNames,
} from './scaffold.ts';
