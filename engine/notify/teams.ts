/**
 * A Microsoft Teams message for a Workflows webhook ("When a Teams webhook request is received"):
 * Office 365 connectors were retired at the end of 2025, and Workflows take an Adaptive Card as an
 * attachment of a `message`. Pure. Teams reads a TextBlock's text as a subset of markdown, so text
 * from files and the service has the characters that open markup escaped and its control characters
 * shown as escapes.
 */
import { escapeForTerminal } from '../text/text-escape.ts';
import type { Notification, OutgoingMessage } from './types.ts';
import { attributionText, headline, LISTED_CONTRACTS, LISTED_FIELDS, moreText, nextStep } from './wording.ts';

export const ADAPTIVE_CARD_VERSION = '1.4';

/**
 * Adaptive Cards read a TextBlock as markdown with bold, italic, lists and links only: the
 * characters that open those are escaped (a list needs a line start, and data has no newline left
 * once control characters are shown as escapes).
 */
export function escapeTeams(text: string): string {
  return escapeForTerminal(text).replace(/([\\*_[\]~])/g, '\\$1');
}

function textBlock(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'TextBlock', text, wrap: true, ...extra };
}

export function teamsMessage(notification: Notification): OutgoingMessage {
  const body: Record<string, unknown>[] = [textBlock(escapeTeams(headline(notification)), { size: 'Medium', weight: 'Bolder' })];
  for (const contract of notification.contracts.slice(0, LISTED_CONTRACTS)) {
    const where = contract.file === undefined ? '' : ` (${contract.file}${contract.line === undefined ? '' : `:${contract.line}`})`;
    body.push(textBlock(`**${escapeTeams(contract.id)}**${escapeTeams(where)}`, { spacing: 'Medium' }));
    if (contract.reason !== undefined) body.push(textBlock(escapeTeams(contract.reason), { spacing: 'None' }));
    const facts = contract.fields.slice(0, LISTED_FIELDS).map((field) => ({
      title: escapeTeams(field.field),
      value: field.attribution === undefined ? 'changed' : escapeTeams(attributionText(field.attribution)),
    }));
    const more = moreText(contract.fields.length, LISTED_FIELDS, 'field');
    if (more !== undefined) facts.push({ title: '…', value: more });
    if (facts.length > 0) body.push({ type: 'FactSet', facts, spacing: 'None' });
  }
  const more = moreText(notification.contracts.length, LISTED_CONTRACTS, 'contract');
  if (more !== undefined) body.push(textBlock(more, { isSubtle: true }));
  body.push(textBlock(`**Next:** ${escapeTeams(nextStep(notification))}`, { spacing: 'Medium' }));
  const context = [notification.commit === undefined ? undefined : `commit ${notification.commit.slice(0, 12)}`, notification.time].filter(
    (part): part is string => part !== undefined,
  );
  body.push(textBlock(escapeTeams(context.join(' · ')), { isSubtle: true, size: 'Small' }));
  const actions = [
    ...(notification.run === undefined ? [] : [{ type: 'Action.OpenUrl', title: 'CI run', url: notification.run.url }]),
    ...(notification.commitUrl === undefined ? [] : [{ type: 'Action.OpenUrl', title: 'Commit', url: notification.commitUrl }]),
  ];
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: ADAPTIVE_CARD_VERSION,
    body,
    ...(actions.length === 0 ? {} : { actions }),
  };
  const message = { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }] };
  return { body: JSON.stringify(message), headers: { 'Content-Type': 'application/json' } };
}
