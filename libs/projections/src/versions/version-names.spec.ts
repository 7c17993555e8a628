import { buildConsumers, buildSchema, schemaSlug } from './version-names.js';

describe('projection version names', () => {
  it('keeps v1 build 1 under the projection name and keys the others', () => {
    // Given / When / Then
    expect(buildConsumers({ projection: 'orders', version: 1, build: 1 })).toBe('orders');
    expect(buildConsumers({ projection: 'orders', version: 2, build: 1 })).toBe('orders@v2');
    expect(buildConsumers({ projection: 'orders', version: 1, build: 3 })).toBe('orders@v1.3');
  });

  it('names a schema per build from a safe slug', () => {
    expect(buildSchema({ projection: 'orders', version: 2, build: 1 })).toBe('orders_v2');
    expect(buildSchema({ projection: 'orders', version: 1, build: 2 })).toBe('orders_v1_b2');
    const odd = schemaSlug('Order-Summary');
    expect(odd).toMatch(/^order_summary_[0-9a-f]{6}$/);
    expect(schemaSlug('order_summary')).not.toBe(odd);
    expect(schemaSlug('x'.repeat(200)).length).toBeLessThanOrEqual(40);
    expect(schemaSlug('1st')).toMatch(/^p_1st_/);
  });
});
