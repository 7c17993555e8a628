import { categoryOf, qualify, type StoredMessage } from '@ordinal/log';

/**
 * What a subscription reads: `'$all'`, some message types (`{ types }`, across
 * categories) or one stream category (`{ category }`). `$all` and type streams read through
 * the low watermark in concurrent mode; a category stream skips it.
 */
export type SubscriptionStream = '$all' | { types: string[] } | { category: string };

/** Whether the stream reads a single category (no watermark needed). */
export function isCategoryStream(stream: SubscriptionStream): stream is { category: string } {
  return typeof stream === 'object' && 'category' in stream;
}

/** The message types a stream filters on (none = every type). */
export function streamTypes(stream: SubscriptionStream): string[] | undefined {
  return typeof stream === 'object' && 'types' in stream && stream.types.length > 0
    ? stream.types
    : undefined;
}

/** Whether a message belongs to the stream (used for late arrivals). */
export function streamAccepts(stream: SubscriptionStream, message: StoredMessage): boolean {
  if (stream === '$all') return true;
  // A category is a tenant's own (docs/tenants.md): compared in its stored, qualified form, as
  // the catch-up reads it (`messages.category`).
  if (isCategoryStream(stream))
    return (
      message.streamId !== null &&
      categoryOf(qualify(message.tenant, message.streamId)) === stream.category
    );
  const types = streamTypes(stream);
  return !types || types.includes(message.messageType);
}

/** A short description for status and logs: `$all`, `types:A,B`, `category:order`. */
export function describeStream(stream: SubscriptionStream): string {
  if (stream === '$all') return '$all';
  if (isCategoryStream(stream)) return `category:${stream.category}`;
  return `types:${stream.types.join(',')}`;
}
