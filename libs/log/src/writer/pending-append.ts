import type { AppendRequest, AppendResult, NewMessage } from '../message.js';
import { contentHash } from '../content-hash.js';

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

export function prepareMessage(message: NewMessage): PreparedMessage {
  const bodyJson = JSON.stringify(message.body);
  const metadataJson =
    message.metadata === undefined || message.metadata === null
      ? null
      : JSON.stringify(message.metadata);
  return { message, bodyJson, metadataJson, hash: contentHash(bodyJson) };
}
