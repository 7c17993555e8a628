import { HEADERS } from '../amqp.constants.js';

/** One acknowledgement a consumer sends to `<name>.ack`. */
export interface InterfaceAck {
  index: number;
  serverCorrelationUuid: string;
}

/**
 * Reads an ack message: `{index, serverCorrelationUuid}`, or a JSON array of them (one
 * message acknowledging many). The uuid may also come as a header for every entry.
 * Entries that are not well formed are dropped and counted. Pure: no I/O.
 */
export function parseAckMessage(
  content: Buffer,
  headers: Record<string, unknown> | undefined,
): { acks: InterfaceAck[]; malformed: number } {
  let raw: unknown;
  try {
    raw = JSON.parse(content.toString('utf8'));
  } catch {
    return { acks: [], malformed: 1 };
  }
  const headerUuid = headers?.[HEADERS.serverCorrelationUuid];
  const fallback =
    typeof headerUuid === 'string'
      ? headerUuid
      : Buffer.isBuffer(headerUuid)
        ? headerUuid.toString('utf8')
        : undefined;
  const entries = Array.isArray(raw) ? raw : [raw];
  const acks: InterfaceAck[] = [];
  let malformed = 0;
  for (const entry of entries) {
    const e = entry as Partial<Record<string, unknown>> | null;
    const index = e?.index;
    const uuid = e?.serverCorrelationUuid ?? fallback;
    if (
      typeof index === 'number' &&
      Number.isSafeInteger(index) &&
      index > 0 &&
      typeof uuid === 'string'
    )
      acks.push({ index, serverCorrelationUuid: uuid });
    else malformed++;
  }
  return { acks, malformed };
}
