import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';

type Release = (error?: unknown) => void;

/**
 * Records every statement the writer's flushes send, one list per connection they lease (a
 * connection obtained from the flush strategies' `lease`, told by the call stack; the pool's
 * other users — the watermark, the router — are left alone). Returns the lists and the
 * function that stops recording.
 */
export function watchFlushes(dataSource: DataSource): { leases: string[][]; stop: () => void } {
  const driver = dataSource.driver as PostgresDriver;
  const obtain = driver.obtainMasterConnection.bind(driver);
  const leases: string[][] = [];
  driver.obtainMasterConnection = async () => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 50;
    const fromWriter = new Error().stack?.includes('flush-strategies') ?? false;
    Error.stackTraceLimit = limit;
    const [client, release] = (await obtain()) as [pg.ClientBase, Release];
    if (!fromWriter) return [client, release];
    const sent: string[] = [];
    leases.push(sent);
    const watched = new Proxy(client, {
      get(target, property) {
        if (property === 'query')
          return (config: pg.QueryConfig) => {
            sent.push(config.text);
            return target.query(config);
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    return [watched, release];
  };
  return {
    leases,
    stop: () => {
      driver.obtainMasterConnection = obtain;
    },
  };
}
