import { InvalidMessageError } from '../errors/index.js';
import { inexactNumberIn } from '@ordinal/pg';
import { prepareImported, type ImportedMessage } from '../writer/pending-append.js';

/** The fields of a message on every entry path: type pattern and text lengths (docs/ingestion.md). */
export const MESSAGE_FIELD_RULES = {
  messageTypePattern: /^[A-Za-z0-9._:-]{1,200}$/,
  maxTextLength: 200,
} as const;

const FIELDS = new Set([
  'messageType',
  'content',
  'userId',
  'metadata',
  'idempotencyKey',
  'correlationId',
  'causationId',
]);
const SHAPE =
  '{"messageType", "content", "userId"?, "metadata"?, "idempotencyKey"?, "correlationId"?, "causationId"?}';

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * One line of an NDJSON import, checked as `POST /api/events/messages` checks one of its
 * messages (same fields, same limits, exact numbers, the log's JSON rules, RFC 8785 hash) and
 * serialised. Throws InvalidMessageError saying what is wrong (without the line number).
 */
export function parseImportLine(text: string): ImportedMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidMessageError(`is not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw new InvalidMessageError(`must be a JSON object ${SHAPE}`);
  for (const key of Object.keys(value)) {
    if (!FIELDS.has(key))
      throw new InvalidMessageError(
        `has the unknown field ${JSON.stringify(key)}; a line is ${SHAPE}`,
      );
  }
  const { messageType, content, userId, metadata, idempotencyKey, correlationId, causationId } =
    value;
  if (
    typeof messageType !== 'string' ||
    !MESSAGE_FIELD_RULES.messageTypePattern.test(messageType)
  ) {
    throw new InvalidMessageError('messageType must be 1-200 characters of [A-Za-z0-9._:-]');
  }
  if (
    userId !== undefined &&
    userId !== null &&
    (typeof userId !== 'string' || userId.length > MESSAGE_FIELD_RULES.maxTextLength)
  ) {
    throw new InvalidMessageError('userId must be a string of at most 200 characters, or null');
  }
  if (content === null || typeof content !== 'object')
    throw new InvalidMessageError('content must be a JSON object or array');
  if (metadata !== undefined && metadata !== null && !isObject(metadata))
    throw new InvalidMessageError('metadata must be a JSON object, or null');
  if (
    idempotencyKey !== undefined &&
    idempotencyKey !== null &&
    (typeof idempotencyKey !== 'string' ||
      idempotencyKey.length === 0 ||
      idempotencyKey.length > MESSAGE_FIELD_RULES.maxTextLength)
  ) {
    throw new InvalidMessageError('idempotencyKey must be 1-200 characters');
  }
  const inexact = inexactNumberIn(text, '');
  if (inexact) throw new InvalidMessageError(`${inexact.path} ${inexact.reason}`);
  return prepareImported({
    messageType,
    userId: userId ?? null,
    body: content,
    metadata: metadata ?? null,
    idempotencyKey: idempotencyKey ?? null,
    // Checked by prepareImported with every entry path's id rules (1-200 characters of text).
    correlationId: correlationId as string | null | undefined,
    causationId: causationId as string | null | undefined,
  });
}
