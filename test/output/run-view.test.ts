/**
 * A run's events as a command shows them (engine/output/run-view.ts): the shard line where the
 * command says, a tenant that did not start on stderr, the reads' progress, and the plan the
 * preview showed kept for the question.
 */
import { describe, expect, it } from 'vitest';
import { runView } from '../../engine/output/run-view.ts';
import type { ApplyPreview } from '../../engine/run/types.ts';

function streams() {
  const said = { stdout: '', stderr: '' };
  return {
    said,
    stdout: { write: (text: string) => (said.stdout += text) },
    stderr: { write: (text: string) => (said.stderr += text), isTTY: false },
  };
}

describe('a run view', () => {
  it('says the shard on the stream it is given, a tenant not started on stderr, and the reads in plain lines without a terminal', () => {
    const io = streams();
    const view = runView(io, { shardOn: 'stdout', command: 'apply', now: () => 0 });

    view.onEvent({ type: 'input', shard: { shard: { index: 1, count: 2 }, tenants: ['acme'], of: 2 } });
    view.onEvent({ type: 'not-started', tenant: 'globex', message: 'tenant globex not started: no secret' });
    view.onEvent({ type: 'phase', phase: 'read-known', known: 'live' });
    view.onEvent({ type: 'progress', step: 'read', tenant: 'acme', contractId: 'C-1', outcome: 'read', done: 1, total: 1 });
    view.finish();

    expect(io.said.stdout).toBe('shard 1/2: 1 of 2 tenants\n');
    expect(io.said.stderr.split('\n')).toEqual([
      'contract-sync apply: tenant globex not started: no secret',
      'contract-sync apply: reading 1/1 contracts (100%), -/s, done in 0s, 0 failed',
      '',
    ]);
  });

  it("starts a note of its own line when a terminal's progress bar is still open (a run stopped part-way)", () => {
    const io = streams();
    const terminal = { ...io, stderr: { ...io.stderr, isTTY: true, columns: 80 } };
    const view = runView(terminal, { shardOn: 'stderr', command: 'apply', now: () => 0 });

    view.onEvent({ type: 'phase', phase: 'send' });
    view.onEvent({ type: 'progress', step: 'send', tenant: 'acme', contractId: 'C-1', outcome: 'applied', done: 1, total: 3 });
    view.onEvent({ type: 'telemetry-not-exported', message: "telemetry not exported (traces to otel.example:4318: HTTP 400); the run's result stands" });
    view.finish();

    expect(io.said.stderr).toContain("\ncontract-sync apply: telemetry not exported (traces to otel.example:4318: HTTP 400); the run's result stands\n");
  });

  it('keeps what the preview showed, for the question; nothing before it', () => {
    const io = streams();
    const view = runView(io, { shardOn: 'stderr', command: 'apply', now: () => 0, showPreview: () => ({ lines: 40, summary: 'summary\n' }) });

    const before = view.shown();
    view.onEvent({ type: 'preview', preview: {} as ApplyPreview });

    expect(before).toBeUndefined();
    expect(view.shown()).toEqual({ lines: 40, summary: 'summary\n' });
  });
});
