import { main } from '../../engine/cli/main.ts';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in-process, as `contract-sync ...args` in `cwd`. */
export async function runCli(args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (text: string) => (stdout += text), isTTY: false },
    stderr: { write: (text: string) => (stderr += text) },
    env,
    cwd,
  });
  return { code, stdout, stderr };
}
