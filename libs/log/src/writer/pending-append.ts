import type { AppendRequest, AppendResult, NewMessage } from '../message.js';
import { contentHash } from '../content-hash.js';
import { InvalidMessageError } from '../errors/index.js';
import { hasNulEscape } from '../jsonb-text.js';

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

/** Serialises a message once; throws InvalidMessageError for content jsonb cannot store. */
export function prepareMessage(message: NewMessage): PreparedMessage {
  const bodyJson = JSON.stringify(message.body);
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
