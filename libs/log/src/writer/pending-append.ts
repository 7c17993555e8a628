import type { AppendRequest, AppendResult, NewMessage } from '../message.js';
import { contentHash } from '../content-hash.js';
import { InvalidMessageError } from '../errors/index.js';
import { hasNulEscape, isStorableText } from '../jsonb-text.js';

/** A message with its JSON and hash computed once, when it is queued. */
export interface PreparedMessage {
  message: NewMessage;
  bodyJson: string;
  metadataJson: string | null;
  hash: string;
}

/** An append waiting in the writer's queue. */
export interface PendingAppend {
  request: AppendRequest;
  prepared: PreparedMessage[];
  bytes: number;
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

/** Serialises a message once; throws InvalidMessageError for anything PostgreSQL cannot store as given. */
export function prepareMessage(message: NewMessage): PreparedMessage {
  const typeProblem = textProblem('messageType', message.messageType, true);
  const problem = typeProblem ?? textProblem('userId', message.userId, false) ?? textProblem('idempotencyKey', message.idempotencyKey, false);
  if (problem) throw new InvalidMessageError(typeProblem ? `Message: ${problem}` : `Message '${message.messageType}': ${problem}`);
  const bodyJson = JSON.stringify(message.body) as string | undefined;
  if (bodyJson === undefined) throw new InvalidMessageError(`Message '${message.messageType}': its content must be JSON`);
  const metadataJson =
    message.metadata === undefined || message.metadata === null
      ? null
      : JSON.stringify(message.metadata);
  const nulIn = hasNulEscape(bodyJson) ? 'content' : hasNulEscape(metadataJson) ? 'metadata' : null;
  if (nulIn) {
    throw new InvalidMessageError(`Message '${message.messageType}' has a NUL character (\\u0000) in its ${nulIn}, which PostgreSQL's jsonb cannot store`);
  }
  return { message, bodyJson, metadataJson, hash: contentHash(bodyJson) };
}
