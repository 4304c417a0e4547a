import { describe, expect, it } from 'vitest';

describe('the package', () => {
  it('exposes the library through `import ... from "contract-sync"`', async () => {
    const library = await import('contract-sync');

    expect(library.FIELDS).toHaveLength(19);
    expect(typeof library.validateDesiredState).toBe('function');
    expect(typeof library.parseConfig).toBe('function');
    expect(typeof library.applyOps).toBe('function');
  });
});
