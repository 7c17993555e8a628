import type { LogPage, OrdinalMessage, PublishResult } from '@ordinal/client';
import type { MessageResponseDto } from '../ingest/dto/message.response.js';
import type { BatchEntryDto } from '../ingest/dto/publish.responses.js';
import type { PageResponseDto } from '../events/dto/read.responses.js';

/**
 * The client's types and the server's response DTOs are one contract: this file compiles
 * (it is part of the server's build) only while each pair is assignable both ways. The e2e
 * test `client-contract` checks the field names against the published OpenAPI document.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** @internal */
export type ClientContract = [
  Same<OrdinalMessage, MessageResponseDto>,
  Same<LogPage, PageResponseDto>,
  Same<PublishResult['status'] | 'duplicate', BatchEntryDto['status']>,
] extends [true, true, true]
  ? true
  : never;

/** @internal Fails to compile when the contract breaks. */
export const CLIENT_CONTRACT_HOLDS: ClientContract = true;
