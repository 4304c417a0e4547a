/**
 * Adapter: a plan of every contract against the state store written as it comes, one tenant at a
 * time: the plan document (JSON) and the text plan's contract lines go to spools
 * (engine/output/spool.ts), which are written to stdout or moved onto --out only once the run is
 * known to be good (an error in the last tenant writes nothing).
 */
import type { PlanHeader, PlanSink } from '../plan/plan-tenant.ts';
import { planJsonPieces } from '../plan/render-json.ts';
import { textPlan, type TextBody, type TextPlan } from '../plan/render-text.ts';
import type { PlanRunOutcome } from '../run/plan.ts';
import { spoolBeside, temporarySpool, type Spool, type SpoolOut } from './spool.ts';
import { holdsNothing, takesBytes, writeBytesOut, writeOut, type Drainable } from './stream.ts';

/** What a streamed plan run ends with that is written after its tenants. */
export type StreamedPlan = Pick<Extract<PlanRunOutcome, { readonly kind: 'streamed' }>, 'source' | 'trailer' | 'unknown'>;

/** The bytes of one body of one tenant in its body's spool: a tenant's lines of a body are written while it is planned, one after another. */
interface BodyRange {
  readonly from: number;
  to: number;
}

/** Where a text or JSON plan goes as it comes, one tenant at a time: spools, written out once the run is known to be good. */
export interface PlanSpools {
  /** Given to the plan run: takes the plan one tenant at a time. */
  readonly sink: PlanSink;
  /**
   * After a streamed run that succeeded: the JSON plan copied to `stdout` (format json) and moved
   * onto the --out file, or the text plan (textPlan's parts: its text around the spooled bodies).
   */
  writeTo(stdout: { write(text: string): unknown } & Drainable, streamed: StreamedPlan): Promise<void>;
  discard(): void;
}

/**
 * The spools are made when the first tenant's plan comes: a run that stops before writes no file.
 * `outFile`: --out, resolved; `color`: the text plan is coloured. The text plan's bodies (the pull
 * request's own contracts, the members removed, each tenant's other contracts) each go to a spool
 * of their own, so that what is kept in memory is a range per body and tenant (and textPlan's
 * counts per tenant), whatever the order the contracts of a tenant come in.
 */
export function planSpools(format: 'text' | 'json', { outFile, color }: { readonly outFile: string | undefined; readonly color: boolean }): PlanSpools {
  const pieces = planJsonPieces();
  let json: Spool | undefined;
  const bodies = new Map<TextBody, Spool>();
  let ranges = new Map<string, BodyRange>();
  let layout: TextPlan | undefined;
  function writeBody(tenant: string, body: TextBody, text: string): void {
    let spool = bodies.get(body);
    if (spool === undefined) {
      spool = temporarySpool();
      bodies.set(body, spool);
    }
    const key = `${body}\n${tenant}`;
    let range = ranges.get(key);
    if (range === undefined) {
      range = { from: spool.position(), to: 0 };
      ranges.set(key, range);
    }
    spool.write(text);
    range.to = spool.position();
  }
  const sink: PlanSink = {
    start(header: PlanHeader) {
      if (outFile !== undefined || format === 'json') json ??= outFile === undefined ? temporarySpool() : spoolBeside(outFile);
      json?.reset();
      for (const spool of bodies.values()) spool.reset();
      ranges = new Map();
      if (format === 'text') layout = textPlan(header.source.base !== undefined, { color });
      json?.write(pieces.header(header));
    },
    // Contract by contract, both as they come: the JSON, and the text's lines, each to its body.
    tenant(tenant) {
      json?.write(pieces.tenantStart(tenant));
      const text = layout?.tenant(tenant, (body, lines) => writeBody(tenant, body, lines));
      return {
        contract(contract) {
          json?.write(pieces.contract(contract));
          text?.contract(contract);
        },
        // Text only: a contract with nothing known is written from its desired fields (its plan's ops not made), a known one's fingerprint not hashed.
        ...(json === undefined && text !== undefined
          ? {
              unknown: (contract, touched) => text.unknown(contract, touched),
              known: (contract) => text.contract(contract),
            }
          : {}),
        end() {
          json?.write(pieces.tenantEnd());
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
      if (layout === undefined) return;
      const { source, trailer, unknown } = streamed;
      for (const part of layout.parts({ source, summary: trailer.summary, noLongerManaged: trailer.noLongerManaged, findings: trailer.findings, unknown })) {
        if (typeof part === 'string') await write(part);
        else {
          const range = ranges.get(`${part.body}\n${part.tenant}`);
          if (range !== undefined) await bodies.get(part.body)!.copyTo(out, range.from, range.to);
        }
      }
    },
    discard() {
      json?.discard();
      for (const spool of bodies.values()) spool.discard();
    },
  };
}
