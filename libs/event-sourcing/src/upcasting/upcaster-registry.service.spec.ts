import { UpcasterRegistry } from './upcaster-registry.service.js';

describe('UpcasterRegistry', () => {
  const v1 = {
    eventType: 'Placed',
    fromVersion: 1,
    upcast: (d: { step?: string[] }) => ({ ...d, step: [...(d.step ?? []), 'v2'] }),
  };
  const v2 = {
    eventType: 'Placed',
    fromVersion: 2,
    upcast: (d: { step: string[] }) => ({ ...d, step: [...d.step, 'v3'] }),
  };

  it('chains upcasters from the stored version and stops where the chain ends', () => {
    // Given v1→v2 and v2→v3
    const registry = new UpcasterRegistry({ upcasters: [v2, v1] });
    // When a v1 event is upcast, Then both run in order
    expect(registry.upcast('Placed', 1, {}, null)).toEqual({
      schemaVersion: 3,
      data: { step: ['v2', 'v3'] },
    });
    // And a v2 event only gets the second step; other types are untouched
    expect(registry.upcast('Placed', 2, { step: [] }, null)).toEqual({
      schemaVersion: 3,
      data: { step: ['v3'] },
    });
    expect(registry.upcast('Other', 1, { a: 1 }, null)).toEqual({
      schemaVersion: 1,
      data: { a: 1 },
    });
  });

  it('stops at the wanted version', () => {
    const registry = new UpcasterRegistry({ upcasters: [v1, v2] });
    expect(registry.upcast('Placed', 1, {}, null, 2)).toEqual({
      schemaVersion: 2,
      data: { step: ['v2'] },
    });
  });

  it('never mutates the input data', () => {
    const registry = new UpcasterRegistry({ upcasters: [v1] });
    const data = Object.freeze({ step: Object.freeze([]) });
    registry.upcast('Placed', 1, data, null);
    expect(data).toEqual({ step: [] });
  });

  it('keeps the first of two upcasters for the same step and rejects a bad version', () => {
    const other = { eventType: 'Placed', fromVersion: 1, upcast: () => ({ other: true }) };
    const registry = new UpcasterRegistry({ upcasters: [v1] });
    registry.register(other);
    expect(registry.upcast('Placed', 1, {}, null).data).toEqual({ step: ['v2'] });
    expect(() => registry.register({ ...v1, fromVersion: 0 })).toThrow(
      // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- Jest types asymmetric matchers as any
      expect.objectContaining({ code: 'invalid_upcaster' }),
    );
  });
});
