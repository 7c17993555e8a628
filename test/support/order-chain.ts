import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Aggregate,
  AggregateRoot,
  DomainEvent,
  EventHandler,
  InjectAggregateRepository,
  OrdinalModule,
  Projection,
  type AggregateRepository,
  type ProjectionContext,
} from '@ordinal/nestjs';

/** The event the aggregate saves in reaction to an order. */
@DomainEvent('PaymentRequested')
export class PaymentRequested {
  constructor(readonly orderId: string) {}
}

@Aggregate({ events: [PaymentRequested] })
export class Payment extends AggregateRoot {
  orderId: string | null = null;
  request(orderId: string): void {
    this.apply(new PaymentRequested(orderId));
  }
  onPaymentRequested(event: PaymentRequested): void {
    this.orderId = event.orderId;
  }
}

/** What a projection context showed for one message. */
export interface SeenContext {
  projection: string;
  index: number;
  messageType: string;
  correlationId: string | null;
  causationId: string | null;
  traceparent: string | null;
}

/** Every context the chain's projections were handed, in order. */
@Injectable()
export class ChainProbe {
  readonly seen: SeenContext[] = [];
  record(projection: string, ctx: ProjectionContext): void {
    const { index, correlationId, causationId, traceparent } = ctx;
    this.seen.push({
      projection,
      index,
      messageType: ctx.message.messageType,
      correlationId,
      causationId,
      traceparent,
    });
  }
}

/**
 * An order's payment is requested by an aggregate command run inside a projection handler of
 * `OrderPlaced` — the user passes no ids: the projection's context carries them.
 */
@Projection('billing')
@Injectable()
export class BillingProjection {
  constructor(
    @InjectAggregateRepository(Payment) private readonly payments: AggregateRepository<Payment>,
    private readonly probe: ChainProbe,
  ) {}

  @EventHandler('OrderPlaced')
  async onOrderPlaced(body: { orderId: string }, ctx: ProjectionContext): Promise<void> {
    this.probe.record('billing', ctx);
    if (ctx.isReplay) return;
    const payment = this.payments.create(`payment-${body.orderId}`);
    payment.request(body.orderId);
    await this.payments.save(payment);
  }
}

/** Sees the aggregate's event and the context it comes with. */
@Projection('audit')
@Injectable()
export class AuditProjection {
  constructor(private readonly probe: ChainProbe) {}

  @EventHandler(PaymentRequested)
  onPaymentRequested(_event: PaymentRequested, ctx: ProjectionContext): void {
    this.probe.record('audit', ctx);
  }
}

/** A user's application with the chain's aggregate and projections, on the suite's database. */
export async function startChainApp(
  databaseUrl: string,
): Promise<{ app: INestApplicationContext; probe: ChainProbe }> {
  @Module({
    imports: [
      OrdinalModule.forRoot({
        url: databaseUrl,
        typeorm: { extra: { max: 6, application_name: 'chain-app' } },
        log: { duplicateWindow: 0, livePollMs: 100 },
        subscriptions: { retryInitialMs: 50, retryMaxMs: 500 },
        cqrs: false,
      }),
      OrdinalModule.forFeature([Payment]),
    ],
    providers: [ChainProbe, BillingProjection, AuditProjection],
  })
  class ChainModule {}
  const app = await NestFactory.createApplicationContext(ChainModule, {
    logger: process.env.ORDINAL_TEST_LOGS ? undefined : false,
  });
  await app.init();
  return { app, probe: app.get(ChainProbe) };
}
