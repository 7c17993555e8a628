import { DomainEvent } from '@ordinal/event-sourcing';
import { EventHandler } from '../decorators/event-handler.decorator.js';
import { InvalidProjectionError } from '../errors/index.js';
import { defineProjection } from './projection-definition.js';

@DomainEvent('Placed', { schemaVersion: 3 })
class Placed {}
class NotAnEvent {}

const methodsOf = (instance: object) =>
  Object.getOwnPropertyNames(Object.getPrototypeOf(instance)).filter((m) => m !== 'constructor');

describe('defineProjection', () => {
  it('routes stored types to handlers: classes with their schema version, type names raw', () => {
    // Given a projection with a class handler and a type-name handler
    class P {
      @EventHandler(Placed) onPlaced() {}
      @EventHandler('Cancelled', 'Refunded') onOther() {}
    }
    // When it is defined
    const definition = defineProjection(
      { name: 'p', options: {} },
      new P(),
      methodsOf(new P()),
      () => undefined,
    );
    // Then each stored type has its route
    expect(definition.routes.get('Placed')).toEqual([
      { method: 'onPlaced', eventClass: Placed, schemaVersion: 3 },
    ]);
    expect(definition.routes.get('Cancelled')).toEqual([
      { method: 'onOther', eventClass: null, schemaVersion: Number.MAX_SAFE_INTEGER },
    ]);
    expect([...definition.routes.keys()]).toEqual(['Placed', 'Cancelled', 'Refunded']);
  });

  it('throws a typed error for a class without @DomainEvent, an empty name, or no handlers', () => {
    class Bad {
      @EventHandler(NotAnEvent) on() {}
    }
    class Empty {
      @EventHandler('') on() {}
    }
    class None {
      helper() {}
    }
    expect(() =>
      defineProjection({ name: 'b', options: {} }, new Bad(), ['on'], () => undefined),
    ).toThrow(InvalidProjectionError);
    expect(() =>
      defineProjection({ name: 'b', options: {} }, new Bad(), ['on'], () => undefined),
    ).toThrow(/decorate NotAnEvent with @DomainEvent/);
    expect(() =>
      defineProjection({ name: 'e', options: {} }, new Empty(), ['on'], () => undefined),
    ).toThrow(/@EventHandler\(''\)/);
    expect(() =>
      defineProjection({ name: 'n', options: {} }, new None(), ['helper'], () => undefined),
    ).toThrow(/has no @EventHandler methods/);
    expect(() =>
      defineProjection({ name: ' ', options: {} }, new None(), ['helper'], () => undefined),
    ).toThrow(/give it a name/);
  });

  it('warns when two methods handle one type, and keeps both', () => {
    class Twice {
      @EventHandler('Placed') a() {}
      @EventHandler(Placed) b() {}
    }
    const warnings: string[] = [];
    const definition = defineProjection({ name: 't', options: {} }, new Twice(), ['a', 'b'], (m) =>
      warnings.push(m),
    );
    expect(warnings).toEqual([expect.stringContaining("b() and a() both handle 'Placed'")]);
    expect(definition.routes.get('Placed')!.map((r) => r.method)).toEqual(['a', 'b']);
  });

  it('throws a typed error for a bad version, a bad promoteAtLag, or a version above 1 without readModels', () => {
    class P {
      @EventHandler('Placed') on() {}
    }
    class Model {}
    const define = (options: object) =>
      defineProjection({ name: 'p', options }, new P(), methodsOf(new P()), () => undefined);
    // Given / When / Then
    expect(() => define({ version: 0 })).toThrow(InvalidProjectionError);
    expect(() => define({ version: 1.5 })).toThrow(/version: 1.5/);
    expect(() => define({ promoteAtLag: -1 })).toThrow(/promoteAtLag/);
    expect(() => define({ version: 2 })).toThrow(/no readModels/);
    expect(define({ version: 2, readModels: [Model], promoteAtLag: false }).options.version).toBe(
      2,
    );
    expect(define({}).options.version).toBeUndefined();
  });

  it('throws a typed error for tenantIsolation above version 1 (a version’s own schema is not behind the wall)', () => {
    class P {
      @EventHandler('Placed') on() {}
    }
    class Model {}
    const define = (options: object) =>
      defineProjection({ name: 'p', options }, new P(), methodsOf(new P()), () => undefined);
    expect(() => define({ tenantIsolation: true, version: 2, readModels: [Model] })).toThrow(
      /tenantIsolation and version 2/,
    );
    expect(define({ tenantIsolation: true, version: 1 }).options.tenantIsolation).toBe(true);
  });
});
