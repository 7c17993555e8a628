import { Aggregate, AggregateRoot, DomainEvent } from '@ordinal/nestjs';
import { AggregateSpec, AggregateSpecFailure } from '@ordinal/nestjs/testing';

@DomainEvent('CartOpened')
class CartOpened {
  constructor(readonly cartId: string) {}
}
@DomainEvent('ItemAdded')
class ItemAdded {
  constructor(
    readonly sku: string,
    readonly qty: number,
  ) {}
}
@DomainEvent('CartCheckedOut')
class CartCheckedOut {
  constructor(readonly items: number) {}
}
@DomainEvent('NotACartEvent')
class NotACartEvent {}

class CartRuleError extends Error {}

@Aggregate({ events: [CartOpened, ItemAdded, CartCheckedOut] })
class Cart extends AggregateRoot {
  items = 0;
  checkedOut = false;

  add(sku: string, qty: number): void {
    if (this.checkedOut) throw new CartRuleError('the cart is checked out');
    this.apply(new ItemAdded(sku, qty));
  }
  checkout(): void {
    if (this.items === 0) throw new CartRuleError('an empty cart cannot check out');
    this.apply(new CartCheckedOut(this.items));
  }
  async checkoutLater(): Promise<void> {
    await Promise.resolve();
    this.checkout();
  }
  onItemAdded(event: ItemAdded): void {
    this.items += event.qty;
  }
  onCartCheckedOut(): void {
    this.checkedOut = true;
  }
}

describe('AggregateSpec', () => {
  const opened = AggregateSpec.for(Cart, 'cart-1').given(
    new CartOpened('cart-1'),
    new ItemAdded('A', 2),
  );

  it('passes when the command applies the expected events, state and version', () => {
    opened.when((cart) => cart.add('B', 1)).expectEvents(new ItemAdded('B', 1));
    opened
      .when((cart) => cart.checkout())
      .expectState((cart) => cart.checkedOut && cart.items === 2 && cart.version === 2);
    opened
      .given(new CartCheckedOut(2))
      .when((cart) => cart.add('C', 1))
      .expectError(CartRuleError, /checked out/);
    AggregateSpec.for(Cart)
      .when((cart) => cart.checkout())
      .expectError(CartRuleError);
  });

  it('fails on a wrong event: another type, other data, one too many or too few', () => {
    const when = opened.when((cart) => cart.add('B', 1));
    expect(() => when.expectEvents(new CartCheckedOut(1))).toThrow(AggregateSpecFailure);
    expect(() => when.expectEvents(new ItemAdded('B', 2))).toThrow(
      /expected events:\n {2}ItemAdded \{"sku":"B","qty":2\}\nbut the command applied:\n {2}ItemAdded \{"sku":"B","qty":1\}/,
    );
    expect(() => when.expectEvents(new ItemAdded('B', 1), new ItemAdded('B', 1))).toThrow(
      AggregateSpecFailure,
    );
    expect(() => when.expectEvents()).toThrow(AggregateSpecFailure);
    expect(() => when.expectNoEvents()).toThrow(AggregateSpecFailure);
  });

  it('fails on a missing error, and on an error of another class or message', () => {
    expect(() => opened.when((cart) => cart.add('B', 1)).expectError(CartRuleError)).toThrow(
      /expected CartRuleError but the command succeeded/,
    );
    expect(() =>
      opened
        .when(() => {
          throw new TypeError('boom');
        })
        .expectError(CartRuleError),
    ).toThrow(/threw TypeError: boom/);
    expect(() =>
      opened
        .given(new CartCheckedOut(2))
        .when((cart) => cart.add('C', 1))
        .expectError(CartRuleError, 'empty'),
    ).toThrow(AggregateSpecFailure);
  });

  it('fails on a wrong state, whether the check returns false or throws', () => {
    const when = opened.when((cart) => cart.checkout());
    expect(() => when.expectState((cart) => cart.items === 3)).toThrow(
      /expectState returned false for cart-1 at version 2/,
    );
    expect(() => when.expectState((cart) => expect(cart.checkedOut).toBe(false))).toThrow();
  });

  it('fails when the command threw but events or a state were expected', () => {
    const when = AggregateSpec.for(Cart).when((cart) => cart.checkout());
    expect(() => when.expectEvents(new CartCheckedOut(0))).toThrow(
      /expected events but the command threw CartRuleError: an empty cart cannot check out/,
    );
    expect(() => when.expectState(() => true)).toThrow(/threw CartRuleError/);
  });

  it('awaits an asynchronous command, and fails the same way', async () => {
    await opened.when((cart) => cart.checkoutLater()).expectEvents(new CartCheckedOut(2));
    await expect(
      AggregateSpec.for(Cart)
        .when((cart) => cart.checkoutLater())
        .expectEvents(new CartCheckedOut(0)),
    ).rejects.toThrow(AggregateSpecFailure);
    await expect(
      opened.when((cart) => cart.checkoutLater()).expectError(CartRuleError),
    ).rejects.toThrow(/succeeded/);
  });

  it('refuses given events the aggregate does not declare, and classes that are not aggregates', () => {
    expect(() => opened.given(new NotACartEvent()).when(() => undefined)).toThrow(
      /does not list NotACartEvent/,
    );
    expect(() => AggregateSpec.for(class NotAnAggregate extends AggregateRoot {})).toThrow(
      /is not an aggregate/,
    );
  });
});
