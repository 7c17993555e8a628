import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import {
  connect,
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
} from 'amqplib';

const run = promisify(execFile);

/** The broker every suite uses (resolved by test/support/global-setup.mjs). */
export function brokerUrl(): string {
  return process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
}

/** A name of one's own for a suite's queues, interfaces and connection. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A test's own client of the broker: publish with confirms, count, consume, clean up. */
export interface TestBroker {
  connection: ChannelModel;
  /** Publishes to a queue through the default exchange and waits for the broker's confirm. */
  publish(
    queue: string,
    body: Buffer | string | object,
    headers?: Record<string, unknown>,
  ): Promise<void>;
  /** Messages ready in a queue (0 for a queue that does not exist). */
  count(queue: string): Promise<number>;
  /** Consumers of a queue. */
  consumers(queue: string): Promise<number>;
  /** Whether the queue exists. */
  exists(queue: string): Promise<boolean>;
  /** A channel of its own (for consumers). */
  channel(): Promise<Channel>;
  /** Deletes queues (missing ones are fine). */
  deleteQueues(...queues: string[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects to the suite's broker. No broker is a failure, never a reason to test less: the
 * error says how to start one.
 */
export async function connectTestBroker(): Promise<TestBroker> {
  const url = brokerUrl();
  const connection = await connect(url, {
    clientProperties: { connection_name: uniqueName('ordinal-test-client') },
  }).catch((cause: unknown) => {
    const where = new URL(url);
    throw new Error(
      `No RabbitMQ answers on ${where.hostname}:${where.port || 5672} (${String(cause)}): ` +
        'this suite needs a broker. Start one (`docker compose -f docker/compose.yml up -d ' +
        'rabbitmq`, or `sudo service rabbitmq-server start`) or set AMQP_URL to one.',
      { cause },
    );
  });
  connection.on('error', () => undefined);
  const confirm: ConfirmChannel = await connection.createConfirmChannel();
  const check = async <T>(
    queue: string,
    pick: (r: { messageCount: number; consumerCount: number }) => T,
    missing: T,
  ): Promise<T> => {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    try {
      return pick(await channel.checkQueue(queue));
    } catch {
      return missing;
    } finally {
      await channel.close().catch(() => undefined);
    }
  };
  return {
    connection,
    publish(queue, body, headers = {}) {
      const content = Buffer.isBuffer(body)
        ? body
        : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      return new Promise((resolve, reject) => {
        confirm.sendToQueue(queue, content, { persistent: true, headers }, (error: Error | null) =>
          error ? reject(error) : resolve(),
        );
      });
    },
    count: (queue) => check(queue, (r) => r.messageCount, 0),
    consumers: (queue) => check(queue, (r) => r.consumerCount, 0),
    exists: (queue) => check(queue, () => true, false),
    async channel() {
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      return channel;
    },
    async deleteQueues(...queues) {
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      for (const queue of queues) await channel.deleteQueue(queue).catch(() => undefined);
      await channel.close().catch(() => undefined);
    },
    async close() {
      await connection.close().catch(() => undefined);
    },
  };
}

/**
 * Closes, from the broker's side, only the connections whose client-provided name is
 * `connectionName` (other suites' connections are untouched). Returns how many it closed.
 */
export async function closeConnectionsNamed(connectionName: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', [
    'list_connections',
    'pid',
    'client_properties',
    '--no-table-headers',
    '-q',
  ]);
  const pids = stdout
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${connectionName}"}`))
    .map((line) => line.split('\t')[0].trim());
  for (const pid of pids)
    await run('rabbitmqctl', ['close_connection', pid, 'ordinal test: broker-side close']);
  return pids.length;
}

/** Collects the deliveries of a queue in arrival order (manual ack by the caller, or auto). */
export interface Collector {
  messages: ConsumeMessage[];
  channel: Channel;
  stop(): Promise<void>;
}

export async function collect(
  broker: TestBroker,
  queue: string,
  onMessage?: (msg: ConsumeMessage, channel: Channel) => void,
  prefetch = 1000,
): Promise<Collector> {
  const deadline = Date.now() + 10_000;
  while (!(await broker.exists(queue))) {
    if (Date.now() > deadline) throw new Error(`Queue ${queue} was not declared within 10 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const channel = await broker.channel();
  await channel.prefetch(prefetch);
  const messages: ConsumeMessage[] = [];
  const { consumerTag } = await channel.consume(queue, (msg) => {
    if (!msg) return;
    messages.push(msg);
    if (onMessage) onMessage(msg, channel);
    else channel.ack(msg);
  });
  return {
    messages,
    channel,
    async stop() {
      await channel.cancel(consumerTag).catch(() => undefined);
      await channel.close().catch(() => undefined);
    },
  };
}
