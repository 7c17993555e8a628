import { SegmentMetrics } from './metrics/segment-metrics.service.js';
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { OrdinalModule } from '@ordinal/nestjs';
import { AmqpModule } from '@ordinal/amqp';
import type { OrdinalConfig } from './config/ordinal-config.js';
import { ordinalOptionsFrom } from './config/ordinal-options.factory.js';
import { ORDINAL_CONFIG } from './config/config.constants.js';
import { AuthGuard } from './auth/auth.guard.js';
import { AllExceptionsFilter } from './errors/all-exceptions.filter.js';
import { IngestController } from './ingest/ingest.controller.js';
import { ImportController } from './ingest/import.controller.js';
import { EventsController } from './events/events.controller.js';
import { HealthController } from './health/health.controller.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { ScavengeMetrics } from './metrics/scavenge-metrics.service.js';
import { MetricsService } from './metrics/metrics.service.js';
import { StreamsController } from './aggregate-streams/streams.controller.js';
import { DtoValidationPipe } from './validation/dto-validation.pipe.js';
import { EventsStreamController } from './sse/events-stream.controller.js';
import { TenantEventsStreamController } from './sse/tenant-events-stream.controller.js';
import { EventStreams } from './sse/event-streams.service.js';
import { StreamRegistry } from './sse/stream-registry.service.js';
import { StreamMetrics } from './sse/stream-metrics.service.js';
import { DebugConsoleController } from './debug/debug-console.controller.js';
import { InterfacesController } from './interfaces/interfaces.controller.js';
import { AmqpMetrics } from './interfaces/amqp-metrics.service.js';
import { amqpOptionsFrom } from './interfaces/amqp-options.factory.js';
import { ProjectionsController } from './projections/projections.controller.js';
import { SubscriptionMetrics } from './projections/subscription-metrics.service.js';
import { StreamTickets } from './auth/stream-tickets.service.js';
import { RequestAuthenticator } from './auth/request-authenticator.js';
import { AccessPolicy } from './access/access-policy.service.js';
import { AuditTrail } from './audit/audit-trail.service.js';
import { GroupAccess } from './consumer-groups/group-access.service.js';
import {
  DeadLettersController,
  InterfaceRewindController,
  ScavengeController,
  ScavengeSchedule,
  SegmentsController,
  TenantsAdminController,
} from './operations/index.js';
import { ConsoleController } from './console/console.controller.js';
import { DashboardController } from './dashboard/dashboard.controller.js';
import { DashboardSampler } from './dashboard/dashboard-sampler.service.js';
import { ConsumerGroupsController } from './consumer-groups/consumer-groups.controller.js';
import { ConsumerGroupStreamController } from './consumer-groups/group-stream.controller.js';
import { GroupMetrics } from './consumer-groups/group-metrics.service.js';
import { PersonalDataController } from './personal-data/personal-data.controller.js';
import { RedactController } from './personal-data/redact.controller.js';

/** The Ordinal server: wiring only; the mechanisms live in libs/. */
@Module({})
export class AppModule {
  static forRoot(config: OrdinalConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({
          isGlobal: true,
          ignoreEnvFile: true,
          load: [() => ({ ordinal: config })],
        }),
        // The same OrdinalModule a service imports: the DataSource, the log, aggregates,
        // subscriptions and projections, and the migrations, from the configuration loaded above.
        OrdinalModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (configService: ConfigService) =>
            ordinalOptionsFrom(configService.getOrThrow<OrdinalConfig>('ordinal')),
          cqrs: false,
        }),
        // AMQP input and push interfaces only when AMQP_URL is set (development defaults it).
        ...(config.amqpUrl ? [AmqpModule.forRoot(amqpOptionsFrom(config))] : []),
      ],
      controllers: [
        IngestController,
        ImportController,
        EventsController,
        HealthController,
        MetricsController,
        StreamsController,
        EventsStreamController,
        TenantEventsStreamController,
        DebugConsoleController,
        InterfacesController,
        ProjectionsController,
        InterfaceRewindController,
        DeadLettersController,
        ScavengeController,
        SegmentsController,
        TenantsAdminController,
        ConsoleController,
        DashboardController,
        ConsumerGroupsController,
        ConsumerGroupStreamController,
        PersonalDataController,
        RedactController,
      ],
      providers: [
        { provide: ORDINAL_CONFIG, useValue: config },
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useClass: DtoValidationPipe },
        MetricsService,
        StreamRegistry,
        EventStreams,
        StreamMetrics,
        AmqpMetrics,
        SubscriptionMetrics,
        GroupMetrics,
        StreamTickets,
        RequestAuthenticator,
        AccessPolicy,
        AuditTrail,
        GroupAccess,
        DashboardSampler,
        ScavengeSchedule,
        ScavengeMetrics,
        SegmentMetrics,
      ],
    };
  }
}
