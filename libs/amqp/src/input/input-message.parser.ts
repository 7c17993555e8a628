import { isUtf8 } from 'node:buffer';
import { parseTraceparent, type CorrelationContext, type NewMessage } from '@ordinal/log';
import { inexactNumberIn, isStorableText } from '@ordinal/pg';
import { HEADERS } from '../amqp.constants.js';

/** messageType: 1-200 characters of [A-Za-z0-9._:-] (I3, the same rule as REST). */
const MESSAGE_TYPE = /^[A-Za-z0-9._:-]{1,200}$/;

/** The outcome of reading one input delivery: a message to append, or why it is rejected. */
export type ParsedInput =
  { ok: true; message: NewMessage; lineage?: CorrelationContext } | { ok: false; reason: string };

/** Why a correlation or causation id from a delivery cannot be stored, or null. */
function idProblem(name: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  if (value.length === 0 || value.length > 200) return `${name} must be 1-200 characters`;
  return isStorableText(value)
    ? null
    : `${name} has a NUL character or an unpaired surrogate, which PostgreSQL cannot store`;
}

/**
 * The correlation a delivery brings: the AMQP `correlation_id` property (else a
 * `correlationId` header, else the `traceparent` header's trace id), the `causationId` header
 * (else the correlation id) and a valid `traceparent` to continue. Undefined when it brings
 * none: the writer starts a new correlation.
 */
function lineageOf(
  h: Record<string, unknown>,
  correlationProperty: unknown,
): CorrelationContext | { reason: string } | undefined {
  const header = text(h[HEADERS.traceparent]);
  const traceparent = parseTraceparent(header) ? header!.trim().toLowerCase() : null;
  const correlationId =
    text(correlationProperty) ??
    text(h[HEADERS.correlationId]) ??
    (traceparent ? traceparent.slice(3, 35) : undefined);
  const causationId = text(h[HEADERS.causationId]);
  const problem =
    idProblem('correlationId', correlationId) ?? idProblem('causationId', causationId);
  if (problem) return { reason: problem };
  if (correlationId === undefined)
    return causationId === undefined
      ? undefined
      : { reason: 'a causationId header needs a correlation_id' };
  return { correlationId, causationId: causationId ?? correlationId, traceparent };
}

/** Header values arrive as strings or, from some clients, as byte arrays (UTF-8, checked first). */
function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** The largest input body by default: the REST body limit's default (ORDINAL_BODY_LIMIT). */
export const DEFAULT_INPUT_BODY_LIMIT = 1024 * 1024;

/**
 * Reads an input delivery: the body is the content JSON (an object or array), headers
 * carry `messageType` (required), `userId`, `metadata` (a JSON object as a string),
 * `idempotencyKey`, `causationId` and `traceparent`; the `correlation_id` property is the
 * message's correlation id. A body over `maxBodyBytes` or not UTF-8 is refused before it is parsed;
 * the JSON rules of the log (depth, exact numbers, storable text) are applied by the writer,
 * as on every entry path. Pure: no I/O.
 */
export function parseInputMessage(
  content: Buffer,
  headers: Record<string, unknown> | undefined,
  maxBodyBytes = DEFAULT_INPUT_BODY_LIMIT,
  correlationProperty?: unknown,
): ParsedInput {
  const h = headers ?? {};
  if (content.length > maxBodyBytes)
    return {
      ok: false,
      reason: `the body is ${content.length} bytes, over the limit of ${maxBodyBytes}`,
    };
  if (!isUtf8(content)) return { ok: false, reason: 'the body is not valid UTF-8' };
  // String headers arrive decoded as UTF-8 (amqplib); byte arrays are decoded by `text`, which
  // would turn invalid bytes into U+FFFD: refuse those here, for every header alike.
  for (const [name, value] of Object.entries(h))
    if (Buffer.isBuffer(value) && !isUtf8(value))
      return { ok: false, reason: `the ${name} header is not valid UTF-8` };
  const messageType = text(h[HEADERS.messageType]);
  if (messageType === undefined || messageType === '')
    return { ok: false, reason: 'no messageType header' };
  if (!MESSAGE_TYPE.test(messageType))
    return { ok: false, reason: 'messageType must be 1-200 characters of [A-Za-z0-9._:-]' };
  let body: unknown;
  const json = content.toString('utf8');
  try {
    body = JSON.parse(json);
  } catch {
    return { ok: false, reason: 'the body is not valid JSON' };
  }
  const inexact = inexactNumberIn(json, 'content');
  if (inexact) return { ok: false, reason: `${inexact.path} ${inexact.reason}` };
  if (body === null || typeof body !== 'object')
    return { ok: false, reason: 'the body must be a JSON object or array' };
  const userId = text(h[HEADERS.userId]);
  if (userId !== undefined && userId.length > 200)
    return { ok: false, reason: 'userId must be at most 200 characters' };
  const idempotencyKey = text(h[HEADERS.idempotencyKey]);
  if (
    idempotencyKey !== undefined &&
    (idempotencyKey.length === 0 || idempotencyKey.length > 200)
  ) {
    return { ok: false, reason: 'idempotencyKey must be 1-200 characters' };
  }
  let metadata: Record<string, unknown> | null = null;
  const rawMetadata = h[HEADERS.metadata];
  if (rawMetadata !== undefined && rawMetadata !== null) {
    const metadataText =
      typeof rawMetadata === 'object' && !Buffer.isBuffer(rawMetadata)
        ? undefined
        : text(rawMetadata);
    const parsed = metadataText === undefined ? rawMetadata : parseJson(metadataText);
    if (
      parsed === undefined ||
      parsed === null ||
      typeof parsed !== 'object' ||
      Array.isArray(parsed)
    ) {
      return { ok: false, reason: 'the metadata header must be a JSON object' };
    }
    const inexactMetadata =
      metadataText === undefined ? null : inexactNumberIn(metadataText, 'metadata');
    if (inexactMetadata)
      return { ok: false, reason: `${inexactMetadata.path} ${inexactMetadata.reason}` };
    metadata = parsed as Record<string, unknown>;
  }
  const lineage = lineageOf(h, correlationProperty);
  if (lineage && 'reason' in lineage) return { ok: false, reason: lineage.reason };
  const message = {
    messageType,
    userId: userId ?? null,
    body,
    metadata,
    idempotencyKey: idempotencyKey ?? null,
  };
  return lineage ? { ok: true, message, lineage } : { ok: true, message };
}

function parseJson(value: string | undefined): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
