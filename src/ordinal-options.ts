import type { AccessRule } from '@ordinal/log';
import type { Type } from '@nestjs/common';
import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import type { MigrationInterface } from 'typeorm';
import type { LogModuleOptions } from '@ordinal/log';
import {
  connectionUrlProblem,
  isAuthenticationFailure,
  isMissingDatabase,
  maskCredentials,
  OrdinalError,
} from '@ordinal/pg';
import type { EventSourcingOptions } from '@ordinal/event-sourcing';
import { EVENT_SOURCING_MIGRATIONS } from '@ordinal/event-sourcing/internal';
import type { SubscriptionsModuleOptions } from '@ordinal/subscriptions';
import { SUBSCRIPTIONS_MIGRATIONS } from '@ordinal/subscriptions/internal';

/** TypeORM options of the PostgreSQL DataSource OrdinalModule creates (`synchronize` is never on; migrations go to OrdinalModule's own `migrations`). */
export type OrdinalTypeOrmOptions = Omit<
  Partial<Extract<TypeOrmModuleOptions, { type?: 'postgres' }>>,
  'type' | 'synchronize' | 'migrationsRun' | 'migrations'
>;

/** Options of `OrdinalModule.forRoot` (or what `forRootAsync`'s `useFactory` returns). Every default lives in `resolveOrdinalOptions`. */
export interface OrdinalModuleOptions {
  /** PostgreSQL connection URL of the DataSource OrdinalModule creates, e.g. `postgres://user@host:5432/db`. Ignored with `useExistingDataSource`. */
  url?: string;
  /**
   * Create the database the connection names when it does not exist (SQLSTATE 3D000), as the
   * Ordinal server does in development; the role needs CREATEDB. Without it a missing database
   * fails the start at once with one error that says so (no retries).
   * @default true unless NODE_ENV is `production`
   */
  createDatabase?: boolean;
  /** Entities of your read models, added to the DataSource OrdinalModule creates. @default [] */
  entities?: Type[];
  /** More TypeORM options for the DataSource OrdinalModule creates (pool size in `extra.max`, ssl, `autoLoadEntities`, …). */
  typeorm?: OrdinalTypeOrmOptions;
  /**
   * Your TypeORM migrations (a read model's tables, say): run at start with Ordinal's, in one
   * transaction under the migration advisory lock, so several replicas may start at once; each
   * is recorded once in the `ordinal_migrations` table. @default []
   */
  migrations?: (new () => MigrationInterface)[];
  /** Run the migrations (Ordinal's and `migrations`) at start. @default true */
  migrate?: boolean;
  /** How long a start waits for another process's migration run before it fails with MigrationFailedError (ms). @default 60000 */
  migrationLockTimeoutMs?: number;
  /**
   * Write a `StartMarker` message into the log once the application has started (when its HTTP
   * server listens; at bootstrap without HTTP). The Ordinal server does; a service rarely wants
   * one in its log. @default false
   */
  startMarker?: boolean;
  /** Options of the log: ordering (`gapless` or `concurrent`), duplicate window, batch bounds, live reads. */
  log?: Omit<LogModuleOptions, 'startMarker' | 'migrate' | 'migrations' | 'migrationLockTimeoutMs'>;
  /** Options of aggregates: page size, upcasters as objects, publishing on the @nestjs/cqrs EventBus. */
  eventSourcing?: Omit<EventSourcingOptions, 'migrate'>;
  /** Options of subscriptions and projections: batch size, polls, retry back-off. */
  subscriptions?: Omit<SubscriptionsModuleOptions, 'migrate'>;
  /**
   * Access rules on categories and message types (docs/security.md), compiled into the
   * injectable `AccessRules`, which your own controllers may ask (`allows`, `checkFor`); the
   * Ordinal server enforces them on every path. @default { rules: [] } (everything allowed)
   */
  access?: { rules?: AccessRule[] };
}

/**
 * What `OrdinalModule` needs before any option is known (structural choices, so they are
 * given beside `useFactory` in `forRootAsync` too).
 */
export interface OrdinalModuleExtras {
  /** Your application has its own `TypeOrmModule.forRoot` for PostgreSQL: use that DataSource instead of creating one. @default false */
  useExistingDataSource?: boolean;
  /** Import `CqrsModule.forRoot()` so saved events reach the EventBus; false if you import it yourself. @default true */
  cqrs?: boolean;
}

/** The options after defaults: what each library module receives. */
export interface ResolvedOrdinalOptions {
  useExistingDataSource: boolean;
  /** Create a missing database at start (with the DataSource OrdinalModule creates). */
  createDatabase: boolean;
  /** TypeORM options of the DataSource OrdinalModule creates (null with `useExistingDataSource`). */
  typeorm: (Extract<TypeOrmModuleOptions, { type?: 'postgres' }> & { type: 'postgres' }) | null;
  log: LogModuleOptions;
  eventSourcing: EventSourcingOptions;
  subscriptions: SubscriptionsModuleOptions;
  access: { rules: AccessRule[] };
}

/** Applies every default of OrdinalModule, in this one place; the libraries resolve their own sections the same way. */
export function resolveOrdinalOptions(
  options: OrdinalModuleOptions = {},
  extras: OrdinalModuleExtras = {},
): ResolvedOrdinalOptions {
  const useExistingDataSource = extras.useExistingDataSource ?? false;
  if (!useExistingDataSource && !options.url && !options.typeorm?.url && !options.typeorm?.host) {
    throw new OrdinalError(
      'invalid_configuration',
      'OrdinalModule needs a PostgreSQL url (forRoot({ url })), typeorm connection options, or useExistingDataSource: true with your own TypeOrmModule.forRoot',
    );
  }
  const url = options.url ?? options.typeorm?.url;
  const problem =
    url === undefined ? null : connectionUrlProblem(url, 'url', ['postgres:', 'postgresql:']);
  if (!useExistingDataSource && problem)
    throw new OrdinalError(
      'invalid_configuration',
      `OrdinalModule: ${maskCredentials(problem)} (forRoot({ url }) or typeorm.url)`,
    );
  const migrate = options.migrate ?? true;
  return {
    access: { rules: options.access?.rules ?? [] },
    useExistingDataSource,
    createDatabase: options.createDatabase ?? process.env.NODE_ENV !== 'production',
    typeorm: useExistingDataSource
      ? null
      : {
          ...options.typeorm,
          type: 'postgres',
          url,
          // A missing database, a refused password or a malformed URL stays so: one clear
          // error at once, not TypeORM's ten retries each logging a stack.
          toRetry:
            options.typeorm?.toRetry ??
            ((error: unknown) =>
              !isMissingDatabase(error) &&
              !isAuthenticationFailure(error) &&
              !(error instanceof OrdinalError) &&
              !(error instanceof TypeError)),
          entities: [
            ...(options.entities ?? []),
            ...((options.typeorm?.entities as Type[] | undefined) ?? []),
          ],
          synchronize: false,
          migrationsRun: false,
        },
    // One migration run for everything: the log's, then aggregates', subscriptions' and yours.
    log: {
      ...options.log,
      startMarker: options.startMarker ?? false,
      migrate,
      migrations: [
        ...EVENT_SOURCING_MIGRATIONS,
        ...SUBSCRIPTIONS_MIGRATIONS,
        ...(options.migrations ?? []),
      ],
      migrationLockTimeoutMs: options.migrationLockTimeoutMs ?? 60_000,
    },
    eventSourcing: { ...options.eventSourcing, migrate: false },
    subscriptions: { ...options.subscriptions, migrate: false },
  };
}
