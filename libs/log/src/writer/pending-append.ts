import type { AppendRequest, AppendResult, NewMessage } from '../message.js';
import { contentHash } from '../content-hash.js';
import { InvalidMessageError } from '../errors/index.js';
import { isStorableText } from '../jsonb-text.js';
import { toStorableJson, type StorableJson } from './json-rules.js';

/** A message with its JSON and hash computed once, when it is queued. */
export interface PreparedMessage {
  /** The message as it reads back from the log: its objects' keys in PostgreSQL's jsonb order. */
  message: NewMessage;
  /** The body's canonical JSON (RFC 8785), what `hash` is taken over. */
  bodyJson: string;
  metadataJson: string | null;
  hash: string;
}

/** An append waiting in the writer's queue. */
export interface PendingAppend {
  request: AppendRequest;
  prepared: PreparedMessage[];
  bytes: number;
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
  return isStorableText(value) ? null : `${name} has a NUL character or an unpaired surrogate, which PostgreSQL cannot store`;
}

function storable(value: unknown, path: string, messageType: string): StorableJson {
  const result = toStorableJson(value, path);
  if ('reason' in result) throw new InvalidMessageError(`Message '${messageType}': ${result.path} ${result.reason}`);
  return result;
}

/**
 * Checks and serialises a message once; throws InvalidMessageError (naming the field path) for
 * anything the log could not give back exactly as sent.
 */
export function prepareMessage(message: NewMessage): PreparedMessage {
  const typeProblem = textProblem('messageType', message.messageType, true);
  const problem = typeProblem ?? textProblem('userId', message.userId, false) ?? textProblem('idempotencyKey', message.idempotencyKey, false);
  if (problem) throw new InvalidMessageError(typeProblem ? `Message: ${problem}` : `Message '${message.messageType}': ${problem}`);
  if (message.body === undefined) throw new InvalidMessageError(`Message '${message.messageType}': its content must be JSON`);
  const body = storable(message.body, 'content', message.messageType);
  const metadata = message.metadata === undefined || message.metadata === null ? null : storable(message.metadata, 'metadata', message.messageType);
  return {
    message: { ...message, body: body.value, metadata: (metadata?.value ?? null) as Record<string, unknown> | null },
    bodyJson: body.canonical,
    metadataJson: metadata?.canonical ?? null,
    hash: contentHash(body.canonical),
  };
}
