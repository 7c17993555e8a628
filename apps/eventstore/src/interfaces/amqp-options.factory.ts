import type { AmqpModuleOptions } from '@ordinal/amqp';
import type { OrdinalConfig } from '../config/ordinal-config.js';

/** The AmqpModule's options from the server's configuration (only called when AMQP_URL is set). */
export function amqpOptionsFrom(config: OrdinalConfig): AmqpModuleOptions {
  return {
    url: config.amqpUrl!,
    connectionName: config.amqp.connectionName,
    inputQueue: config.amqp.inputQueue,
    prefetch: config.amqp.prefetch,
    inputBodyLimitBytes: config.bodyLimitBytes,
    quorumQueues: config.amqp.quorumQueues,
    interfaces: config.amqp.interfaces,
    migrate: config.migrations !== 'skip',
  };
}
