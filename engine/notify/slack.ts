/**
 * A Slack incoming-webhook message: `text` (the notification's fallback) and Block Kit blocks. Pure.
 * Text from files and the service is escaped as Slack asks (`&`, `<`, `>`), so it never becomes a
 * link or a mention (`<!channel>`, `<@U123>`), and control characters are shown as escapes.
 */
import { escapeForTerminal } from '../text/text-escape.ts';
import type { Notification, OutgoingMessage } from './types.ts';
import { attributionText, headline, LISTED_CONTRACTS, LISTED_FIELDS, moreText, nextStep } from './wording.ts';

export function escapeSlack(text: string): string {
  return escapeForTerminal(text).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** A link Slack shows as `label`; the URL is one the engine built (commit, CI run), never data. */
function link(url: string, label: string): string {
  return `<${url.replaceAll('|', '%7C').replaceAll('>', '%3E')}|${escapeSlack(label)}>`;
}

function contractText(contract: Notification['contracts'][number]): string {
  const where = contract.file === undefined ? '' : ` (${escapeSlack(contract.file)}${contract.line === undefined ? '' : `:${contract.line}`})`;
  const lines = [`*${escapeSlack(contract.id)}*${where}`];
  if (contract.reason !== undefined) lines.push(escapeSlack(contract.reason));
  for (const field of contract.fields.slice(0, LISTED_FIELDS)) {
    lines.push(`• ${escapeSlack(field.field)}${field.attribution === undefined ? '' : `: ${escapeSlack(attributionText(field.attribution))}`}`);
  }
  const more = moreText(contract.fields.length, LISTED_FIELDS, 'field');
  if (more !== undefined) lines.push(`• ${more}`);
  return lines.join('\n');
}

export function slackMessage(notification: Notification): OutgoingMessage {
  const title = headline(notification);
  const context = [
    notification.commit === undefined
      ? undefined
      : `commit ${notification.commitUrl === undefined ? escapeSlack(notification.commit.slice(0, 12)) : link(notification.commitUrl, notification.commit.slice(0, 12))}`,
    notification.run === undefined ? undefined : link(notification.run.url, 'CI run'),
    escapeSlack(notification.time),
  ].filter((part): part is string => part !== undefined);
  const more = moreText(notification.contracts.length, LISTED_CONTRACTS, 'contract');
  const blocks = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${escapeSlack(title)}*` } },
    ...notification.contracts.slice(0, LISTED_CONTRACTS).map((contract) => ({ type: 'section', text: { type: 'mrkdwn', text: contractText(contract) } })),
    ...(more === undefined ? [] : [{ type: 'context', elements: [{ type: 'mrkdwn', text: more }] }]),
    { type: 'section', text: { type: 'mrkdwn', text: `*Next:* ${escapeSlack(nextStep(notification))}` } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: context.join(' · ') }] },
  ];
  // No link_names, no unfurling: nothing in the message pings anyone or fetches anything.
  const body = JSON.stringify({ text: escapeSlack(title), blocks, unfurl_links: false, unfurl_media: false });
  return { body, headers: { 'Content-Type': 'application/json' } };
}
