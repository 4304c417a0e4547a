/** `plan --format github`: one workflow annotation per contract a reviewer should look at. Pure. */
import { KNOWN_FROM_TEXT, plural, ALREADY_MATCHES_TEXT } from './render-common.ts';
import { touchedContracts, type TenantContract } from './render-order.ts';
import type { PlanDocument } from './types.ts';
import { escapeData, escapeProperty } from '../text/github-commands.ts';
import { escapeForTerminal } from '../text/text-escape.ts';

function contractNotice({ tenant, contract }: TenantContract, touched: boolean): string {
  const properties = [
    `file=${escapeProperty(escapeForTerminal(contract.file))}`,
    `line=${contract.line}`,
    `title=${escapeProperty(`contract ${escapeForTerminal(contract.id)} (${tenant})`)}`,
  ];
  const what =
    contract.ops.length === 0
      ? ALREADY_MATCHES_TEXT
      : `${plural(contract.ops.length, 'op')} to apply (${KNOWN_FROM_TEXT[contract.knownFrom]}): ${contract.changes
          .map((change) => change.field)
          .filter((field, index, all) => all.indexOf(field) === index)
          .join(', ')}`;
  return `::notice ${properties.join(',')}::${escapeData(`${touched ? 'changed in this pull request; ' : ''}${what}`)}\n`;
}

/**
 * With a base: a notice per touched contract at its file and line, and a warning per contract no
 * longer managed (no position: the line that declared it is gone). Without a base: a notice per
 * contract with ops.
 */
export function renderPlanAnnotations(plan: PlanDocument): string {
  if (plan.source.base === undefined) {
    const changed = plan.tenants.flatMap((tenant) =>
      tenant.contracts.filter((c) => c.action === 'update').map((contract) => ({ tenant: tenant.tenant, contract })),
    );
    return changed.map((entry) => contractNotice(entry, false)).join('');
  }
  let out = touchedContracts(plan)
    .map((entry) => contractNotice(entry, true))
    .join('');
  for (const contract of plan.noLongerManaged ?? []) {
    const title = escapeProperty(`contract ${escapeForTerminal(contract.id)} (${contract.tenant}) no longer managed`);
    const message = `removed from the desired state (it was at ${escapeForTerminal(contract.file)}:${contract.line}); contract-sync never deletes, so it is left unchanged on the service`;
    out += `::warning title=${title}::${escapeData(message)}\n`;
  }
  return out;
}
