/**
 * The CI files `contract-sync init` writes: short versions of examples/github-actions and
 * examples/gitlab-ci (which explain every choice at length). Pure text.
 */

/** What each scaffolded tenant is called in the files: its key and the variable holding its secret. */
export interface TenantNames {
  readonly tenant: string;
  readonly secretEnv: string;
}

/**
 * The GitHub Action of this package: action.yml ships at the package's root, so the installed
 * package is the Action (a local action: pinned by package-lock.json, no tag to trust, and the
 * same version as the CLI it runs). A vendored copy is used the same way by its path.
 */
export const ACTION_REF = './node_modules/contract-sync';
/** The Node.js the CI files run on: the current LTS. */
export const CI_NODE_VERSION = '24';

/** Before the Action's first use in a job: the installed package is the Action, so install it first. */
const INSTALL = `      # The Action is the installed package (action.yml ships in it): install before using it.
      - uses: actions/setup-node@v4
        with:
          node-version: '${CI_NODE_VERSION}'
          cache: npm
      - run: npm ci --no-audit --no-fund`;

const STATE_CACHE = `      # The file state store (.contract-sync/state) does not outlive the job: keep it in the
      # cache, one entry per run, the newest restored (see examples/github-actions in the package).`;

/** A job that changes the service: its state store restored from the newest entry, and saved again (one entry per attempt) however the job ends. */
const RESTORE_STATE = `      - uses: actions/cache/restore@v4
        with:
          path: .contract-sync/state
          key: contract-sync-state-production-\${{ github.run_id }}-\${{ github.run_attempt }}
          restore-keys: contract-sync-state-production-`;
const SAVE_STATE = `      - if: always()
        uses: actions/cache/save@v4
        with:
          path: .contract-sync/state
          key: contract-sync-state-production-\${{ github.run_id }}-\${{ github.run_attempt }}`;

/** The workflow: the plan job on pull requests, the apply job on pushes to main, and the drift job left commented out. */
export function githubWorkflow(names: readonly TenantNames[]): string {
  return `${WORKFLOW_HEAD}${PLAN_JOB}\n${applyJob(names)}\n${commentedOut(driftJob(names))}`;
}

/** One line per tenant secret of a job's `env:`, read from the environment's secrets. */
function secretsEnv(names: readonly TenantNames[]): string {
  return names.map(({ secretEnv }) => `      ${secretEnv}: \${{ secrets.${secretEnv} }}`).join('\n');
}

/** `job`, its lines commented out where they stand (`  # ` for their first two spaces). */
function commentedOut(job: string): string {
  return job.replace(/^ {2}/gm, '  # ');
}

const WORKFLOW_HEAD = `# contract-sync: validate and plan every pull request (one sticky comment with the plan), apply on
# merge to main. Written by contract-sync init. Needs: contract-sync in package.json and
# package-lock.json (the Action is the installed package: uses: ${ACTION_REF}), and one
# secret per tenant in the "production" environment, named as in contract-sync.yaml.
name: contract-sync

on:
  pull_request:
    branches: [main]
  push:
    branches: [main]
  # Drift correction reads every contract live: configure api.read first, then uncomment this
  # and the drift job below.
  # schedule:
  #   - cron: '17 5 * * *'

permissions:
  contents: read

jobs:
`;

const PLAN_JOB = `  plan:
    if: github.event_name == 'pull_request'
    runs-on: ubuntu-latest
    timeout-minutes: 15
    permissions:
      contents: read
      pull-requests: write   # the plan comment (forks get a read-only token: the plan is in the job summary)
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0     # --base needs the target branch and the merge base
${INSTALL}
${STATE_CACHE}
      - uses: actions/cache/restore@v4
        with:
          path: .contract-sync/state
          key: contract-sync-state-production-\${{ github.run_id }}
          restore-keys: contract-sync-state-production-
      - uses: ${ACTION_REF}
        with:
          command: validate
          args: --format github
          node-version: '${CI_NODE_VERSION}'
      - uses: ${ACTION_REF}
        with:
          command: plan
          args: --ref HEAD --base origin/\${{ github.base_ref }}
          comment: true
          node-version: '${CI_NODE_VERSION}'
`;

function applyJob(names: readonly TenantNames[]): string {
  return `  apply:
    if: github.event_name == 'push'
    runs-on: ubuntu-latest
    timeout-minutes: 60
    environment: production
    # One run that changes the service at a time; never cancel one half-way through its PATCHes.
    concurrency:
      group: contract-sync-apply-production
      cancel-in-progress: false
    env:
${secretsEnv(names)}
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0     # incremental apply lists the files changed since the last applied commit
${INSTALL}
${STATE_CACHE}
${RESTORE_STATE}
      - uses: ${ACTION_REF}
        with:
          command: apply
          args: --ref HEAD --report run.json
          node-version: '${CI_NODE_VERSION}'
${SAVE_STATE}
`;
}

/** Scheduled drift correction: the apply job's shape, run by the schedule, with `drift --fix`. */
function driftJob(names: readonly TenantNames[]): string {
  return `  drift:
    if: github.event_name == 'schedule'
    runs-on: ubuntu-latest
    timeout-minutes: 60
    environment: production
    concurrency:
      group: contract-sync-apply-production
      cancel-in-progress: false
    env:
${secretsEnv(names)}
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - uses: actions/setup-node@v4
        with:
          node-version: '${CI_NODE_VERSION}'
          cache: npm
      - run: npm ci --no-audit --no-fund
${RESTORE_STATE}
      - uses: ${ACTION_REF}
        with:
          command: drift
          args: --fix --detailed-exitcode --format markdown
          node-version: '${CI_NODE_VERSION}'
${SAVE_STATE}
`;
}

export function gitlabPipeline(): string {
  return `# contract-sync: validate and plan every merge request, apply on the default branch, correct
# drift from a pipeline schedule. Written by contract-sync init. Needs: contract-sync in
# package.json; one masked, protected CI/CD variable per tenant secret, named as in
# contract-sync.yaml, scoped to the "production" environment. See examples/gitlab-ci in the package.
workflow:
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
    - if: $CI_COMMIT_BRANCH && $CI_OPEN_MERGE_REQUESTS && $CI_PIPELINE_SOURCE == "push"
      when: never
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH

variables:
  GIT_DEPTH: "0"     # --base and incremental apply need the history

stages: [check, plan, apply]

default:
  image: node:${CI_NODE_VERSION}
  interruptible: true
  before_script:
    - npm ci --cache .npm --prefer-offline --no-audit --no-fund

.state-cache: &state-cache
  key: contract-sync-state-production
  paths: [.contract-sync/state/]
  when: always
  policy: pull-push

validate:
  stage: check
  script:
    - npx contract-sync validate

plan:mr:
  stage: plan
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
  cache:
    - <<: *state-cache
      policy: pull
  script:
    - BASE_SHA="\${CI_MERGE_REQUEST_TARGET_BRANCH_SHA:-$CI_MERGE_REQUEST_DIFF_BASE_SHA}"
    - npx contract-sync plan --ref HEAD --base "$BASE_SHA" --format markdown > plan.md
    - cat plan.md
  artifacts:
    when: always
    expose_as: contract-sync plan
    paths: [plan.md]
    expire_in: 30 days

.changes-service:
  interruptible: false            # never stop a run half-way through its PATCHes
  resource_group: contract-sync-production
  cache: [*state-cache]
  environment:
    name: production

apply:
  extends: .changes-service
  stage: apply
  rules:
    - if: $CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
  script:
    - npx contract-sync apply --ref HEAD --report run.json
  artifacts:
    when: always
    paths: [run.json]
    expire_in: 90 days

# Needs api.read in contract-sync.yaml, and a pipeline schedule (Build > Pipeline schedules).
drift:
  extends: .changes-service
  stage: apply
  rules:
    - if: $CI_PIPELINE_SOURCE == "schedule"
  script:
    - npx contract-sync drift --fix --detailed-exitcode --format markdown > drift.md || status=$?
    - cat drift.md
    - exit "\${status:-0}"
  artifacts:
    when: always
    paths: [drift.md]
    expire_in: 30 days
`;
}
