import type { AppendRequest, AppendResult, NewMessage } from '../message.js';
import { contentHash, resendKey } from '../content-hash.js';
import { InvalidMessageError } from '../errors/index.js';
import { isStorableText } from '@ordinal/pg';
import { toCanonicalJson, toStorableJson, type StorableJson } from '@ordinal/pg';
import type { Span } from '@opentelemetry/api';
import type { CorrelationContext } from '../trace/correlation-context.js';

/** Longest correlation or causation id the log takes (a UUID is 36, a W3C trace id 32). */
export const MAX_CORRELATION_ID_LENGTH = 200;

/** A message with its JSON and hash computed once, when it is queued. */
export interface PreparedMessage {
  /** The message as it reads back from the log: its objects' keys in PostgreSQL's jsonb order. */
  message: NewMessage;
  /** The body's canonical JSON (RFC 8785), what `hash` is taken over. */
  bodyJson: string;
  metadataJson: string | null;
  hash: string;
  /**
   * What the duplicate window compares (`resendKey`: type, user, content and metadata), once
   * `resendKeyOf` has taken it: only while the window is open (its first messages after a
   * start), so a message after that pays no second SHA-256.
   */
  resendKey?: string;
  /**
   * The append's tenant (docs/tenants.md): `message.idempotencyKey` is then qualified (stored
   * form), and the message is a duplicate only of that tenant's.
   */
  tenant?: string;
}

/** The message's resend key, taken the first time it is asked for. */
export function resendKeyOf(p: PreparedMessage): string {
  return (p.resendKey ??= resendKey(
    p.tenant === undefined ? p.message.messageType : `${p.tenant}/${p.message.messageType}`,
    p.message.userId,
    p.hash,
    p.metadataJson,
  ));
}

/** An append waiting in the writer's queue. */
export interface PendingAppend {
  request: AppendRequest;
  prepared: PreparedMessage[];
  bytes: number;
  /** The append's span: flush spans link to it, its context is stored with the messages. */
  span: Span;
  /** When it was queued (performance.now()); the writer's concurrent-mode fill rule reads it. */
  queuedAt?: number;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** Why a text field cannot be stored as given, or null. */
function textProblem(name: string, value: unknown, required: boolean): string | null {
  if (value === null || value === undefined) return required ? `${name} is required` : null;
  if (typeof value !== 'string') return `${name} must be a string`;
  if (required && value.length === 0) return `${name} must not be empty`;
  return isStorableText(value)
    ? null
    : `${name} has a NUL character or an unpaired surrogate, which PostgreSQL cannot store`;
}

/** Why a correlation or causation id cannot be stored, or null. */
function idProblem(name: string, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' && (value.length === 0 || value.length > MAX_CORRELATION_ID_LENGTH))
    return `${name} must be 1-${MAX_CORRELATION_ID_LENGTH} characters`;
  return textProblem(name, value, false);
}

function storable(value: unknown, path: string, messageType: string): StorableJson {
  const result = toStorableJson(value, path);
  if ('reason' in result)
    throw new InvalidMessageError(`Message '${messageType}': ${result.path} ${result.reason}`);
  return result;
}

/** A message checked and serialised for bulk import: its text and hash, no jsonb-ordered copy. */
export interface ImportedMessage {
  message: NewMessage;
  bodyJson: string;
  metadataJson: string | null;
  hash: string;
}

function canonical(value: unknown, path: string, messageType: string): string {
  const result = toCanonicalJson(value, path);
  if (typeof result !== 'string')
    throw new InvalidMessageError(`Message '${messageType}': ${result.path} ${result.reason}`);
  return result;
}

/**
 * `prepareMessage`'s checks and canonical text (the same rules, the same hash) for a message
 * nobody reads back from memory: `message` keeps the values as given.
 */
export function prepareImported(message: NewMessage): ImportedMessage {
  checkFields(message);
  const bodyJson = canonical(message.body, 'content', message.messageType);
  const metadataJson =
    message.metadata === undefined || message.metadata === null
      ? null
      : canonical(message.metadata, 'metadata', message.messageType);
  return { message, bodyJson, metadataJson, hash: contentHash(bodyJson) };
}

function checkFields(message: NewMessage): void {
  const typeProblem = textProblem('messageType', message.messageType, true);
  const problem =
    typeProblem ??
    textProblem('userId', message.userId, false) ??
    textProblem('idempotencyKey', message.idempotencyKey, false) ??
    idProblem('correlationId', message.correlationId) ??
    idProblem('causationId', message.causationId);
  if (problem)
    throw new InvalidMessageError(
      typeProblem ? `Message: ${problem}` : `Message '${message.messageType}': ${problem}`,
    );
  if (message.body === undefined)
    throw new InvalidMessageError(`Message '${message.messageType}': its content must be JSON`);
}

/**
 * Checks and serialises a message once; throws InvalidMessageError (naming the field path) for
 * anything the log could not give back exactly as sent.
 */
export function prepareMessage(message: NewMessage, lineage?: CorrelationContext): PreparedMessage {
  checkFields(message);
  const body = storable(message.body, 'content', message.messageType);
  const metadata =
    message.metadata === undefined || message.metadata === null
      ? null
      : storable(message.metadata, 'metadata', message.messageType);
  // A message's own ids win over the context's (a batch may carry several correlations).
  const correlationId = message.correlationId ?? lineage?.correlationId ?? null;
  const causationId =
    message.causationId ??
    (message.correlationId ? message.correlationId : lineage?.causationId) ??
    correlationId;
  const traceparent = message.traceparent ?? lineage?.traceparent ?? null;
  // A sealed message's body holds replacements: its hash takes the sealed fields in too, so two
  // messages differing only in personal values are not window duplicates (random IVs: never).
  const hash = contentHash(
    message.personal ? `${body.canonical}\n${message.personal.sealed}` : body.canonical,
  );
  return {
    message: {
      ...message,
      body: body.value,
      metadata: (metadata?.value ?? null) as Record<string, unknown> | null,
      correlationId,
      causationId,
      traceparent,
    },
    bodyJson: body.canonical,
    metadataJson: metadata?.canonical ?? null,
    hash,
  };
}
