/**
 * Adapter: a plan of every contract against the state store written as it comes, one tenant at a
 * time: the plan document (JSON) and the text plan's contract lines go to spools
 * (engine/output/spool.ts), which are written to stdout or moved onto --out only once the run is
 * known to be good (an error in the last tenant writes nothing).
 */
import type { PlanHeader, PlanSink } from '../plan/plan-tenant.ts';
import { renderFindingsText } from '../plan/render-findings.ts';
import { planJsonPieces } from '../plan/render-json.ts';
import { renderPlanTextContract, renderPlanTextHead, renderPlanTextTail, renderPlanTextTenantHead, renderUnknownContractText } from '../plan/render-text.ts';
import type { PlanRunOutcome } from '../run/plan.ts';
import { spoolBeside, temporarySpool, type Spool, type SpoolOut } from './spool.ts';
import { holdsNothing, takesBytes, writeBytesOut, writeOut, type Drainable } from './stream.ts';

/** What a streamed plan run ends with that is written after its tenants. */
export type StreamedPlan = Pick<Extract<PlanRunOutcome, { readonly kind: 'streamed' }>, 'source' | 'trailer' | 'unknown'>;

/** A tenant's part of the text plan: its head, kept as text (it counts the contracts, so it is known last), and the bytes of its contracts' lines in the text spool. */
interface TextSection {
  readonly head: string;
  readonly from: number;
  readonly to: number;
}

/** Where a text or JSON plan goes as it comes, one tenant at a time: spools, written out once the run is known to be good. */
export interface PlanSpools {
  /** Given to the plan run: takes the plan one tenant at a time. */
  readonly sink: PlanSink;
  /**
   * After a streamed run that succeeded: the JSON plan copied to `stdout` (format json) and moved
   * onto the --out file, or the text plan (its head, each tenant's head before its lines, its tail).
   */
  writeTo(stdout: { write(text: string): unknown } & Drainable, streamed: StreamedPlan): Promise<void>;
  discard(): void;
}

/**
 * The spools are made when the first tenant's plan comes: a run that stops before writes no file.
 * `outFile`: --out, resolved; `color`: the text plan is coloured.
 */
export function planSpools(format: 'text' | 'json', { outFile, color }: { readonly outFile: string | undefined; readonly color: boolean }): PlanSpools {
  const pieces = planJsonPieces();
  let json: Spool | undefined;
  let text: Spool | undefined;
  let sections: TextSection[] = [];
  const sink: PlanSink = {
    start(header: PlanHeader) {
      if (outFile !== undefined || format === 'json') json ??= outFile === undefined ? temporarySpool() : spoolBeside(outFile);
      if (format === 'text') text ??= temporarySpool();
      json?.reset();
      text?.reset();
      sections = [];
      json?.write(pieces.header(header));
    },
    // Contract by contract, both as they come: the JSON, and the text's lines (its tenant's head, which counts them, is kept aside).
    tenant(tenant) {
      json?.write(pieces.tenantStart(tenant));
      const from = text?.position() ?? 0;
      const spooled = text;
      return {
        contract(contract) {
          json?.write(pieces.contract(contract));
          if (text === undefined) return;
          const rendered = renderPlanTextContract(contract, { color });
          if (rendered !== '') text.write(rendered);
        },
        // Text only: a contract with nothing known is written from its desired fields (its plan's ops not made), a known one's fingerprint not hashed.
        ...(json === undefined && spooled !== undefined
          ? {
              unknown(contract, touched) {
                const rendered = renderUnknownContractText(contract, touched, { color });
                if (rendered !== '') spooled.write(rendered);
              },
              known(contract) {
                const rendered = renderPlanTextContract(contract, { color });
                if (rendered !== '') spooled.write(rendered);
              },
            }
          : {}),
        end(counts) {
          json?.write(pieces.tenantEnd());
          if (text === undefined) return;
          sections.push({ head: renderPlanTextTenantHead(tenant, counts, { color }), from, to: text.position() });
        },
      };
    },
  };
  return {
    sink,
    async writeTo(stdout, streamed) {
      if (json) json.write(pieces.trailer(streamed.trailer));
      // Copied out as stdout takes it: a pipe read slowly must not make this process hold the whole plan.
      function write(chunk: string): Promise<void> {
        return writeOut(stdout, chunk);
      }
      // A Node stream takes the spool's bytes as they are (not decoded to be encoded again).
      const out: SpoolOut = takesBytes(stdout) ? { bytes: (chunk) => writeBytesOut(stdout, chunk), done: () => holdsNothing(stdout) } : { text: write };
      if (format === 'json') await json?.copyTo(out);
      if (json && outFile !== undefined) json.commitTo(outFile);
      if (text) {
        await write(renderPlanTextHead({ source: streamed.source, ...streamed.trailer }, { color }));
        for (const section of sections) {
          await write(section.head);
          await text.copyTo(out, section.from, section.to);
        }
        await write(
          renderPlanTextTail(streamed.trailer.noLongerManaged ?? [], streamed.unknown, { color }) + renderFindingsText(streamed.trailer.findings, { color }),
        );
      }
    },
    discard() {
      json?.discard();
      text?.discard();
    },
  };
}
