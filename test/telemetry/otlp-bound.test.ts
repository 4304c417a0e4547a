/**
 * The export's bound runs on the injected clock (engine/telemetry/otlp.ts): a collector that never
 * answers is given up on when the clock says so, and the problem says it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../engine/io/clock.ts';
import { exportRunSignals } from '../../engine/telemetry/otlp.ts';
import { planSignals } from '../../engine/telemetry/run-signals.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';

const cleanups = cleanupsAfterEach();

describe('the OTLP export bound', () => {
  it('gives up on a collector that never answers when the injected clock says the bound has passed', async () => {
    const hanging: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    const waited: number[] = [];
    // Time passes at once: the bound is reached as soon as it is waited for.
    const clock: Clock = { now: () => 0, sleep: async (ms) => void waited.push(ms) };
    const signals = planSignals({ start: 0, end: 1000, commit: null, summary: { tenants: 0, contracts: 0, changed: 0, ops: 0 } });

    const started = Date.now();
    const problems = await exportRunSignals(
      signals,
      { serviceName: 'contract-sync', traces: { url: `${url}/v1/traces`, headers: {} } },
      {
        version: '0.0.0',
        timeoutMs: 60_000,
        clock,
      },
    );

    expect(problems).toEqual(['no answer within 60 s']);
    expect(waited).toEqual([61_000]);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
