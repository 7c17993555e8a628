import { connect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import type { DataSource } from 'typeorm';
import { claimIndex, createBillingTables, insertCharge } from './billing.sql.js';

/** Where billing reads from and writes to. */
export interface BillingConsumerOptions {
  amqpUrl: string;
  /** The replayable interface Ordinal pushes orders to (`<name>.sink`, `<name>.ack`). */
  interfaceName: string;
  dataSource: DataSource;
}

/**
 * ACME billing: a consumer of a replayable interface (docs/amqp.md). Each delivery is charged
 * in one transaction together with its index in `billing_processed`, so a delivery sent
 * again (after an Ordinal restart or outage) is recognised by its index and not charged twice.
 * Then both acknowledgements, in this order: to Ordinal (`<name>.ack`, moves the bookmark),
 * then to the broker (removes the delivery from the sink). Duplicates are acknowledged too,
 * otherwise the bookmark would never pass them.
 */
export class BillingConsumer {
  private connection: ChannelModel | null = null;
  private channel: Channel | null = null;
  /** Deliveries recognised as already charged. */
  duplicates = 0;

  constructor(private readonly options: BillingConsumerOptions) {}

  async start(): Promise<void> {
    await run(this.options.dataSource.manager, createBillingTables());
    this.connection = await connect(this.options.amqpUrl);
    this.connection.on('error', () => undefined);
    const channel = (this.channel = await this.connection.createChannel());
    await channel.prefetch(100);
    await channel.consume(`${this.options.interfaceName}.sink`, (msg) => {
      if (msg) void this.handle(channel, msg);
    });
  }

  async stop(): Promise<void> {
    await this.connection?.close().catch(() => undefined);
  }

  private async handle(channel: Channel, msg: ConsumeMessage): Promise<void> {
    const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
    const index = Number(headers.index);
    const order = JSON.parse(msg.content.toString()) as { total?: number };
    const charged = await this.options.dataSource.transaction(async (manager) => {
      const claimed = await run(manager, claimIndex(index));
      if (claimed.length === 0) return false;
      await run(
        manager,
        insertCharge(index, (headers.userId as string | undefined) ?? null, order.total ?? 0),
      );
      return true;
    });
    if (!charged) this.duplicates++;
    // 1. Tell Ordinal this index is done (the bookmark moves over contiguous runs).
    channel.sendToQueue(
      `${this.options.interfaceName}.ack`,
      Buffer.from(JSON.stringify({ index, serverCorrelationUuid: headers.serverCorrelationUuid })),
      {
        contentType: 'application/json',
      },
    );
    // 2. Remove the delivery from the sink.
    channel.ack(msg);
  }
}

async function run(
  manager: { query(text: string, values?: unknown[]): Promise<unknown> },
  query: { text: string; values: unknown[] },
): Promise<unknown[]> {
  return (await manager.query(query.text, query.values)) as unknown[];
}
