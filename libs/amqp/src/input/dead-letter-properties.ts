import type { ConsumeMessage, Options } from 'amqplib';
import { HEADERS } from '../amqp.constants.js';

/** Why Ordinal refused an input delivery (the `x-ordinal-error` header of its dead letter). */
export interface InputRefusal {
  /** One of the error codes of docs/errors.md (`invalid_message` for bad input). */
  code: string;
  message: string;
}

/** The `x-ordinal-error` header: why, and when (ISO 8601, the server's clock). */
export interface OrdinalErrorHeader extends InputRefusal {
  time: string;
}

/**
 * The properties of a refused input delivery's copy in `<input>.rejected`: its own headers and
 * properties, `x-ordinal-error` (code, message and time: why, for an operator without the
 * server log), and the `x-first-death-*` headers the broker's dead-lettering used to add. The AMQP
 * `user_id` property is left out: the broker checks it against the publishing connection's
 * user, and refuses a copy that carries another.
 */
export function deadLetterProperties(
  msg: ConsumeMessage,
  inputQueue: string,
  refusal: InputRefusal,
  now: Date = new Date(),
): Options.Publish {
  const error: OrdinalErrorHeader = {
    code: refusal.code,
    message: refusal.message,
    time: now.toISOString(),
  };
  const p = msg.properties;
  const properties: Options.Publish = {
    headers: {
      ...((p.headers ?? {}) as Record<string, unknown>),
      [HEADERS.ordinalError]: error,
      'x-first-death-reason': 'rejected',
      'x-first-death-queue': inputQueue,
      'x-first-death-exchange': msg.fields.exchange,
    },
    persistent: true,
  };
  const copied = {
    contentType: p.contentType as string | undefined,
    contentEncoding: p.contentEncoding as string | undefined,
    correlationId: p.correlationId as string | undefined,
    replyTo: p.replyTo as string | undefined,
    messageId: p.messageId as string | undefined,
    timestamp: p.timestamp as number | undefined,
    type: p.type as string | undefined,
    appId: p.appId as string | undefined,
    priority: p.priority as number | undefined,
  };
  for (const [name, value] of Object.entries(copied))
    if (value !== undefined && value !== null)
      (properties as Record<string, unknown>)[name] = value;
  return properties;
}
