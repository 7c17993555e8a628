import { DomainEvent } from '@ordinal/nestjs';

/**
 * An order was placed. Schema v2 added `email`; v1 events are upcast on read by
 * `OrderPlacedV1Upcaster` (the stored rows never change).
 */
@DomainEvent('OrderPlaced', { schemaVersion: 2 })
export class OrderPlaced {
  constructor(
    readonly customer: string,
    readonly email: string,
  ) {}
}
