import { DomainEvent } from '@ordinal/event-sourcing';

/** An order left the warehouse. */
@DomainEvent('OrderShipped')
export class OrderShipped {
  constructor(readonly shippedAt: string) {}
}
