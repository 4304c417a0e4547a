/** What a worker of a shared run says when it loses a tenant's claim: recorded only when its run ended well (issue 41, item 1). */
import { describe, expect, it } from 'vitest';
import { describeSharedEvent } from '../../engine/run/render-run.ts';

describe('a lost claim', () => {
  it('says what was applied is recorded when the tenant ran to its end', () => {
    expect(describeSharedEvent({ kind: 'lost', worker: 'w1', tenant: 'acme' })).toBe(
      "worker w1 lost its claim of tenant acme (its database session ended) after running it: what it applied is recorded and counted in the run's history; another worker of the run marks the tenant done",
    );
  });

  it('claims nothing of the kind when the run ended with an error, and escapes it', () => {
    const said = describeSharedEvent({ kind: 'lost', worker: 'w1', tenant: 'acme', error: 'tenant lock lost; sending stopped\u001b[2J' });

    expect(said).toBe(
      'worker w1 lost its claim of tenant acme (its database session ended) after running it; its run ended with: tenant lock lost; sending stopped\\e[2J, so requests in flight may not be recorded: the next run settles them and counts those that landed; another worker of the run marks the tenant done',
    );
    expect(said).not.toContain('what it applied is recorded');
  });
});
