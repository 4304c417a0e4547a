/** What `notify test` prints: one line per channel, what it answered. Pure. */
import { escapeForTerminal } from '../text/text-escape.ts';
import { plural } from '../text/plural.ts';
import type { ChannelAnswer } from './notify-test.ts';

export function renderNotifyTest(answers: readonly ChannelAnswer[]): string {
  const lines = answers.map(({ channel, kind, result }) => {
    const name = `${channel} (${kind})`;
    if (result.ok) {
      const said = result.answer === '' ? '' : `: ${result.answer}`;
      return `  ok      ${name}: answered ${result.status}${said} (${plural(result.attempts, 'attempt')})`;
    }
    return `  failed  ${name}: ${result.warning}`;
  });
  const failed = answers.filter((answer) => !answer.result.ok).length;
  const summary =
    failed === 0
      ? `${plural(answers.length, 'channel')} took the test message.`
      : `${failed} of ${plural(answers.length, 'channel')} did not take the test message.`;
  return `${lines.map(escapeForTerminal).join('\n')}\n${summary}\n`;
}
