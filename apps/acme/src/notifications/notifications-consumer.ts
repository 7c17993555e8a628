import { connect, type ChannelModel } from 'amqplib';

/** A shipped order as notifications sees it. */
export interface ShippedNotice {
  index: number;
  customer: string | null;
  order: unknown;
}

/**
 * ACME notifications: a consumer of a realtime interface (docs/amqp.md). Each order shipped
 * while Ordinal runs arrives once; history is never replayed, so a restarted or newly added
 * notifications service never mails Wile about last month's rockets. There is no bookmark
 * and no ack queue: only the broker acknowledgement.
 */
export class NotificationsConsumer {
  private connection: ChannelModel | null = null;

  constructor(
    private readonly amqpUrl: string,
    private readonly interfaceName: string,
    private readonly send: (notice: ShippedNotice) => Promise<void> | void,
  ) {}

  async start(): Promise<void> {
    this.connection = await connect(this.amqpUrl);
    this.connection.on('error', () => undefined);
    const channel = await this.connection.createChannel();
    await channel.consume(`${this.interfaceName}.sink`, (msg) => {
      if (!msg) return;
      const headers = msg.properties.headers ?? {};
      void Promise.resolve(
        this.send({
          index: Number(headers.index),
          customer: (headers.userId as string | undefined) ?? null,
          order: JSON.parse(msg.content.toString()),
        }),
      )
        .then(() => channel.ack(msg))
        .catch(() => channel.nack(msg, false, true));
    });
  }

  async stop(): Promise<void> {
    await this.connection?.close().catch(() => undefined);
  }
}
