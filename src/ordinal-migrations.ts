import type { MigrationClass } from '@ordinal/pg';

/** The AMQP library's migrations when it is installed (the server has it; a service may not). */
async function amqpMigrations(): Promise<MigrationClass[]> {
  const specifier = '@ordinal/amqp/internal';
  try {
    const amqp = (await import(specifier)) as { AMQP_MIGRATIONS: MigrationClass[] };
    return amqp.AMQP_MIGRATIONS;
  } catch {
    return [];
  }
}

/**
 * Every migration of Ordinal's libraries, in the order a start runs them: the log's and
 * consumer ownership's, aggregates' (snapshots), subscriptions' (checkpoints), and the AMQP
 * library's when it is installed. `ordinal migrate` and the server's `ORDINAL_MIGRATIONS=only`
 * run these (with `runMigrations` of `@ordinal/pg`). Loaded on demand: TypeORM and the
 * libraries cost a command's start-up.
 */
export async function ordinalMigrations(): Promise<MigrationClass[]> {
  const [
    { OWNERSHIP_MIGRATIONS },
    { LOG_MIGRATIONS },
    { EVENT_SOURCING_MIGRATIONS },
    { SUBSCRIPTIONS_MIGRATIONS },
  ] = await Promise.all([
    import('@ordinal/ownership'),
    import('@ordinal/log/internal'),
    import('@ordinal/event-sourcing/internal'),
    import('@ordinal/subscriptions/internal'),
  ]);
  return [
    ...LOG_MIGRATIONS,
    ...OWNERSHIP_MIGRATIONS,
    ...EVENT_SOURCING_MIGRATIONS,
    ...SUBSCRIPTIONS_MIGRATIONS,
    ...(await amqpMigrations()),
  ];
}
