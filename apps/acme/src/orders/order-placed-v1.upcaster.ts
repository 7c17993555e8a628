import { Injectable } from '@nestjs/common';
import { Upcaster, type EventUpcaster } from '@ordinal/nestjs';

/** OrderPlaced v1 → v2: v1 had no email (the Cursus example). */
@Injectable()
@Upcaster('OrderPlaced', 1)
export class OrderPlacedV1Upcaster implements EventUpcaster {
  upcast(data: { customer: string }): { customer: string; email: string } {
    return { ...data, email: 'unknown' };
  }
}
