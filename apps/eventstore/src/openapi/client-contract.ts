import type { ImportResult, LogPage, OrdinalMessage, PublishResult } from '@ordinal/client';
import type { MessageResponseDto } from '../ingest/dto/message.response.js';
import type { ImportResponseDto } from '../ingest/dto/import.response.js';
import type { BatchEntryDto } from '../ingest/dto/publish.responses.js';
import type { PageResponseDto } from '../events/dto/read.responses.js';

/**
 * The client's types (the contract's, @ordinal/contract) and the server's response DTOs are one
 * contract: this file compiles (it is part of the server's build) only while each pair is
 * assignable both ways and, for the message and the import result, names the same keys with
 * the same ones optional (assignability alone lets a DTO miss an optional field). The e2e test
 * `client-contract` checks the field names against the published OpenAPI document.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** The keys of `T` that may be absent. */
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];

/** Assignable both ways, the same keys, the same ones optional. */
type SameShape<A, B> = [
  Same<A, B>,
  Same<keyof A, keyof B>,
  Same<OptionalKeys<A>, OptionalKeys<B>>,
] extends [true, true, true]
  ? true
  : false;

/** @internal */
export type ClientContract = [
  SameShape<OrdinalMessage, MessageResponseDto>,
  SameShape<ImportResult, ImportResponseDto>,
  Same<LogPage, PageResponseDto>,
  Same<PublishResult['status'] | 'duplicate', BatchEntryDto['status']>,
] extends [true, true, true, true]
  ? true
  : never;

/** @internal Fails to compile when the contract breaks. */
export const CLIENT_CONTRACT_HOLDS: ClientContract = true;
