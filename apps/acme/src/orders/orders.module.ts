import { Module } from '@nestjs/common';
import { OrdinalModule } from '@ordinal/nestjs';
import { Order } from './order.aggregate.js';
import { OrderPlacedV1Upcaster } from './order-placed-v1.upcaster.js';
import { OrdersService } from './orders.service.js';
import { OrderShippedHandler } from './order-shipped.handler.js';

/**
 * ACME's orders. The application imports `OrdinalModule.forRoot({ url })` once, then this
 * module: the repository, the upcaster and an EventBus handler.
 */
@Module({
  imports: [OrdinalModule.forFeature([Order], { upcasters: [OrderPlacedV1Upcaster] })],
  providers: [OrdersService, OrderShippedHandler],
  exports: [OrdersService],
})
export class OrdersModule {}
