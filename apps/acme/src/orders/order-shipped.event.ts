import { DomainEvent } from '@ordinal/nestjs';

/** An order left the warehouse. */
@DomainEvent('OrderShipped')
export class OrderShipped {
  constructor(readonly shippedAt: string) {}
}
