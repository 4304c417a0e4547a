/**
 * The checks of `notify:` that the schema cannot make (docs/architecture.md section 5). Pure: the
 * config as written in, problems at the config's lines out. A Slack or Teams webhook URL is itself
 * a credential (whoever holds it can post), so it is a secret reference and never quoted; a generic
 * webhook's URL may be written, and is held to the config's URL rules.
 */
import type { PathSegment } from '../model/schema-validator.ts';
import type { SchemaProblem } from '../yaml/yaml-source.ts';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `['notify', i, 'url' | 'secret']`: values never quoted in a message. */
export function isNotifySecretPath(path: readonly PathSegment[]): boolean {
  return path[0] === 'notify' && typeof path[1] === 'number' && (path[2] === 'url' || path[2] === 'secret');
}

/** The message for a notify url or secret the schema refused, without its value. */
export function notifySecretMessage(path: readonly PathSegment[], raw: unknown): string {
  const channel = isRecord(raw) && Array.isArray(raw.notify) ? (raw.notify[path[1] as number] as unknown) : undefined;
  const kind = isRecord(channel) ? channel.kind : undefined;
  if (path[2] === 'secret') return 'expected a secret reference { env: NAME } or { file: PATH }; literal secrets are not allowed in this file';
  return kind === 'webhook'
    ? 'expected an https:// URL or a secret reference { env: NAME } or { file: PATH }'
    : 'expected a secret reference { env: NAME } or { file: PATH }';
}

/** Problems of the channels as written; `checkUrl` holds a written URL to the config's rules (https, loopback, no credentials). */
export function notifyProblems(raw: Record<string, unknown>, checkUrl: (path: PathSegment[], value: string) => SchemaProblem[]): SchemaProblem[] {
  if (!Array.isArray(raw.notify)) return [];
  const tenants = isRecord(raw.tenants) ? new Set(Object.keys(raw.tenants)) : undefined;
  const problems: SchemaProblem[] = [];
  const names = new Map<string, number>();
  for (const [index, channel] of raw.notify.entries()) {
    if (!isRecord(channel)) continue;
    function at(...rest: PathSegment[]): PathSegment[] {
      return ['notify', index, ...rest];
    }
    if (typeof channel.name === 'string') {
      const first = names.get(channel.name);
      if (first !== undefined)
        problems.push({ path: at('name'), code: 'config', message: `the channel name ${JSON.stringify(channel.name)} is taken by notify[${first}]` });
      else names.set(channel.name, index);
    }
    if (channel.kind === 'slack' || channel.kind === 'teams') {
      // Never quoted: the URL is the credential.
      if (typeof channel.url === 'string' && URL.canParse(channel.url)) {
        problems.push({
          path: at('url'),
          code: 'literal-secret',
          message: `a ${channel.kind === 'slack' ? 'Slack' : 'Teams'} webhook URL is a secret (whoever holds it can post): write { env: NAME } or { file: PATH }`,
        });
      }
      if (channel.secret !== undefined) {
        problems.push({ path: at('secret'), atKey: true, code: 'config', message: `${channel.kind} messages are not signed: secret is for kind webhook only` });
      }
    }
    if (channel.kind === 'webhook') {
      if (channel.secret === undefined)
        problems.push({
          path: at(),
          code: 'config',
          message: 'a webhook channel needs secret: { env: NAME } or { file: PATH }, the key its messages are signed with',
        });
      if (typeof channel.url === 'string' && URL.canParse(channel.url)) problems.push(...checkUrl(at('url'), channel.url));
    }
    if (Array.isArray(channel.on)) {
      const seen = new Set<unknown>();
      for (const [position, event] of channel.on.entries()) {
        if (seen.has(event)) problems.push({ path: at('on', position), code: 'config', message: `the event ${JSON.stringify(event)} is listed twice` });
        seen.add(event);
      }
    }
    if (Array.isArray(channel.tenants) && tenants !== undefined) {
      for (const [position, tenant] of channel.tenants.entries()) {
        if (typeof tenant === 'string' && !tenants.has(tenant)) {
          problems.push({
            path: at('tenants', position),
            code: 'config',
            message: `the tenant ${JSON.stringify(tenant)} is not in tenants (${[...tenants].join(', ')})`,
          });
        }
      }
    }
  }
  return problems;
}
