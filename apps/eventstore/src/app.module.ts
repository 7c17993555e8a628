import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ConfigModule } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LogModule } from '@ordinal/log';
import { EventSourcingModule } from '@ordinal/event-sourcing';
import { AmqpModule } from '@ordinal/amqp';
import type { OrdinalConfig } from './config/ordinal-config.js';
import { ORDINAL_CONFIG } from './config/config.constants.js';
import { AuthGuard } from './auth/auth.guard.js';
import { AllExceptionsFilter } from './errors/all-exceptions.filter.js';
import { IngestController } from './ingest/ingest.controller.js';
import { EventsController } from './events/events.controller.js';
import { HealthController } from './health/health.controller.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { MetricsService } from './metrics/metrics.service.js';
import { StreamsController } from './streams/streams.controller.js';
import { DtoValidationPipe } from './validation/dto-validation.pipe.js';
import { EventsStreamController } from './stream/events-stream.controller.js';
import { StreamRegistry } from './stream/stream-registry.service.js';
import { StreamMetrics } from './stream/stream-metrics.service.js';
import { DebugConsoleController } from './debug/debug-console.controller.js';
import { InterfacesController } from './interfaces/interfaces.controller.js';
import { AmqpMetrics } from './interfaces/amqp-metrics.service.js';
import { amqpOptionsFrom } from './interfaces/amqp-options.factory.js';
import { ProjectionsModule } from '@ordinal/projections';
import { ProjectionsController } from './projections/projections.controller.js';
import { SubscriptionMetrics } from './projections/subscription-metrics.service.js';

/** The Ordinal server: wiring only; the mechanisms live in libs/. */
@Module({})
export class AppModule {
  static forRoot(config: OrdinalConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [() => ({ ordinal: config })] }),
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: config.databaseUrl,
          entities: [],
          synchronize: false,
          migrationsRun: false,
          retryAttempts: 1,
          retryDelay: 500,
          extra: {
            max: config.dbPoolSize,
            connectionTimeoutMillis: 5000,
            query_timeout: config.queryTimeoutMs,
            application_name: 'ordinal',
          },
        }),
        LogModule.forRoot({
          isGlobal: true,
          ordering: config.ordering,
          duplicateWindow: config.duplicateWindow,
          mailboxLimit: config.streamMailbox,
          livePollMs: config.livePollMs,
          gapTimeoutMs: config.gapTimeoutMs,
          exactRelease: config.exactRelease,
          lateRescanMs: config.lateRescanMs,
          takeoverMs: config.takeoverMs,
        }),
        EventSourcingModule.forRoot(),
        // Projections of the server itself: none; the status and rebuild API lists what runs here.
        ProjectionsModule.forRoot({ subscriptions: { stuckAfterMs: config.stuckAfterMs } }),
        // AMQP input and push interfaces only when AMQP_URL is set (development defaults it).
        ...(config.amqpUrl ? [AmqpModule.forRoot(amqpOptionsFrom(config))] : []),
      ],
      controllers: [IngestController, EventsController, HealthController, MetricsController, StreamsController, EventsStreamController, DebugConsoleController, InterfacesController, ProjectionsController],
      providers: [
        { provide: ORDINAL_CONFIG, useValue: config },
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useClass: DtoValidationPipe },
        MetricsService,
        StreamRegistry,
        StreamMetrics,
        AmqpMetrics,
        SubscriptionMetrics,
      ],
    };
  }
}
