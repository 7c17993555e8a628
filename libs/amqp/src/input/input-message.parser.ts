import type { NewMessage } from '@ordinal/log';
import { HEADERS } from '../amqp.constants.js';

/** messageType: 1-200 characters of [A-Za-z0-9._:-] (I3, the same rule as REST). */
const MESSAGE_TYPE = /^[A-Za-z0-9._:-]{1,200}$/;

/** The outcome of reading one input delivery: a message to append, or why it is rejected. */
export type ParsedInput = { ok: true; message: NewMessage } | { ok: false; reason: string };

/** Header values arrive as strings or, from some clients, as byte arrays. */
function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * Reads an input delivery: the body is the content JSON (an object or array), headers
 * carry `messageType` (required), `userId`, `metadata` (a JSON object as a string) and
 * `idempotencyKey`. Pure: no I/O.
 */
export function parseInputMessage(content: Buffer, headers: Record<string, unknown> | undefined): ParsedInput {
  const h = headers ?? {};
  const messageType = text(h[HEADERS.messageType]);
  if (messageType === undefined || messageType === '') return { ok: false, reason: 'no messageType header' };
  if (!MESSAGE_TYPE.test(messageType)) return { ok: false, reason: 'messageType must be 1-200 characters of [A-Za-z0-9._:-]' };
  let body: unknown;
  try {
    body = JSON.parse(content.toString('utf8'));
  } catch {
    return { ok: false, reason: 'the body is not valid JSON' };
  }
  if (body === null || typeof body !== 'object') return { ok: false, reason: 'the body must be a JSON object or array' };
  const userId = text(h[HEADERS.userId]);
  if (userId !== undefined && userId.length > 200) return { ok: false, reason: 'userId must be at most 200 characters' };
  const idempotencyKey = text(h[HEADERS.idempotencyKey]);
  if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 200)) {
    return { ok: false, reason: 'idempotencyKey must be 1-200 characters' };
  }
  let metadata: Record<string, unknown> | null = null;
  const rawMetadata = h[HEADERS.metadata];
  if (rawMetadata !== undefined && rawMetadata !== null) {
    const parsed = typeof rawMetadata === 'object' && !Buffer.isBuffer(rawMetadata) ? rawMetadata : parseJson(text(rawMetadata));
    if (parsed === undefined || parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return { ok: false, reason: 'the metadata header must be a JSON object' };
    }
    metadata = parsed as Record<string, unknown>;
  }
  return { ok: true, message: { messageType, userId: userId ?? null, body, metadata, idempotencyKey: idempotencyKey ?? null } };
}

function parseJson(value: string | undefined): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
