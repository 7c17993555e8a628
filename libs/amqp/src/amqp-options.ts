import { hostname } from 'node:os';
import { numberOption } from '@ordinal/pg';
import type { InterfaceConfig } from './interfaces/interface-config.js';

/** Options of `AmqpModule.forRoot`. Every default lives in `resolveAmqpOptions`. */
export interface AmqpModuleOptions {
  /** The broker, e.g. `amqp://guest:guest@127.0.0.1:5672`. */
  url: string;
  /** Client-provided connection name shown by the broker. @default `ordinal-<host>-<pid>` */
  connectionName?: string;
  /** The input queue; `false` turns AMQP input off. Its dead-letter queue is `<input>.rejected`. @default 'eventstore.input' */
  inputQueue?: string | false;
  /** Largest input body in bytes; a larger delivery is dead-lettered (the same limit as REST bodies). @default 1048576 */
  inputBodyLimitBytes?: number;
  /** Unacknowledged input deliveries in flight (they group-commit together; a window of several flushes keeps the writer busy). @default 10000 */
  prefetch?: number;
  /** Push interfaces. @default [] */
  interfaces?: InterfaceConfig[];
  /** Declare every queue as a quorum queue (`x-queue-type: quorum`) for a RabbitMQ cluster. @default false */
  quorumQueues?: boolean;
  /** Publishes an interface keeps unconfirmed at once. @default 1000 */
  confirmWindow?: number;
  /** First delay of every back-off (reconnect, database failure, interface restart), ms. @default 200 */
  retryInitialMs?: number;
  /** Longest delay of every back-off, ms. @default 10000 */
  retryMaxMs?: number;
  /** AMQP heartbeat, seconds. @default 10 */
  heartbeatSeconds?: number;
  /** Run this library's migrations (the bookmark table) at start. @default true */
  migrate?: boolean;
}

export type ResolvedAmqpOptions = Required<AmqpModuleOptions>;

/** Applies the defaults (documented on `AmqpModuleOptions`). */
export function resolveAmqpOptions(options: AmqpModuleOptions): ResolvedAmqpOptions {
  return {
    url: options.url,
    connectionName: options.connectionName ?? `ordinal-${hostname()}-${process.pid}`,
    inputQueue: options.inputQueue ?? 'eventstore.input',
    inputBodyLimitBytes: options.inputBodyLimitBytes ?? 1024 * 1024,
    prefetch: numberOption(options.prefetch, {
      option: 'amqp.prefetch',
      setWith: 'AmqpModule.forRoot({ prefetch })',
      env: 'ORDINAL_AMQP_PREFETCH',
      fallback: 10_000,
      min: 1,
    }),
    interfaces: options.interfaces ?? [],
    quorumQueues: options.quorumQueues ?? false,
    confirmWindow: options.confirmWindow ?? 1000,
    retryInitialMs: options.retryInitialMs ?? 200,
    retryMaxMs: options.retryMaxMs ?? 10_000,
    heartbeatSeconds: options.heartbeatSeconds ?? 10,
    migrate: options.migrate ?? true,
  };
}
