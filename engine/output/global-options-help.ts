/**
 * The global options' help (`--chdir`, `--no-color`, `--log-format`), as a command's help and the
 * main help show it; engine/cli/global-options.ts parses them. Text only.
 */

/** In a command's help; the main help lists the variables below it instead (MAIN_GLOBAL_OPTIONS_HELP). */
export const GLOBAL_OPTIONS_HELP = `Global options (every command):
  --chdir DIR           run as if started in DIR: every path is relative to it (also:
                        CONTRACT_SYNC_CHDIR)
  --no-color            no colour (also: NO_COLOR set to any value)
  --log-format F        json or text log lines on stderr (also: CONTRACT_SYNC_LOG_FORMAT); default:
                        text at a terminal, showing warnings and errors only, else JSON lines at info
                        (CONTRACT_SYNC_LOG_LEVEL=debug|info|warn|error|silent overrides the level)
Without --config or --repo, contract-sync.yaml is looked for in the working directory, then in each
directory above it up to the git repository's root. Environment variables for common flags
(CONTRACT_SYNC_CONFIG, ...): see contract-sync --help.
`;

/** The same in the main help, which lists the variables itself (a help that sends to itself helps nobody). */
export const MAIN_GLOBAL_OPTIONS_HELP = GLOBAL_OPTIONS_HELP.replace(
  '(CONTRACT_SYNC_CONFIG, ...): see contract-sync --help.',
  '(CONTRACT_SYNC_CONFIG, ...): below.',
);
