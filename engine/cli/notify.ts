/** `contract-sync notify test [--channel NAME]`: a sample message to each notification channel, and what each answered. */
import { formatDiagnostics } from '../diagnostic/diagnostic-format.ts';
import { renderNotifyTest } from '../run/render-notify-test.ts';
import { runNotifyTest } from '../run/notify-test.ts';
import { EXIT, failWith, parseCommand, UsageError, type CliIo, type ExitCode } from './io.ts';
import { WHERE_OPTIONS, whereOf } from './run-args.ts';
import { runEffects } from './run-effects.ts';

export const NOTIFY_HELP = `Usage: contract-sync notify test [--channel NAME] [--config FILE] [--repo DIR]

Sends a sample message, marked as a test, to each channel under notify: in the config (or only to
NAME), and prints what each answered. Reads the config only: no desired state, no token, no request
to the service. Each channel is tried as a real notification would be (retries with backoff, at
most 30 s); URLs and secrets are never printed.

Options:
  --channel NAME  only this channel
  --config FILE   engine config (default: DIR/contract-sync.yaml)
  --repo DIR      repository holding the config (default: .)

Exit codes: 0 every channel took the message, 1 any did not (or the config is invalid, or has no
notify: section).
`;

export async function notifyCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals, helped } = parseCommand(io, NOTIFY_HELP, args, true, {
    channel: { type: 'string' },
    ...WHERE_OPTIONS,
  });
  if (helped) return EXIT.ok;
  const [action, extra] = positionals;
  if (action !== 'test')
    throw new UsageError(action === undefined ? 'name what to do: contract-sync notify test' : `unknown notify action "${action}"; the one action is test`);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);

  const outcome = await runNotifyTest(
    {
      kind: 'notify-test',
      where: whereOf(values),
      ...(values.channel === undefined ? {} : { channel: values.channel }),
    },
    await runEffects(io),
  );
  switch (outcome.kind) {
    case 'invalid-config':
      io.stdout.write(formatDiagnostics(outcome.diagnostics, 'text'));
      return EXIT.error;
    case 'bad-request':
      throw new UsageError(outcome.message);
    case 'no-channels':
      return failWith(io, 'notify', `${outcome.configFile} has no notify: section; docs/notifications.md says how to add channels`);
    case 'notified':
      io.stdout.write(renderNotifyTest(outcome.answers));
      return outcome.answers.every((answer) => answer.result.ok) ? EXIT.ok : EXIT.error;
  }
}
