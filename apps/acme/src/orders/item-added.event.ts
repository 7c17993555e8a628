import { DomainEvent } from '@ordinal/nestjs';

/** A line was added to an order. */
@DomainEvent('ItemAdded')
export class ItemAdded {
  constructor(
    readonly sku: string,
    readonly qty: number,
    readonly price: number,
  ) {}
}
