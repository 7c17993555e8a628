import type { GroupDelivery, GroupFetchResponse } from '@ordinal/contract';
import type { GroupDeliveryEvent, GroupFetchResult } from '@ordinal/subscriptions';
import type { JsonText } from '../sse/json-text.js';

/**
 * One delivered event as JSON text: `index`, the message's fields as PostgreSQL rendered them
 * (the same bytes every reader gets; nothing parsed or serialised here), `deliveryAttempt` and
 * `late`.
 */
export function groupDeliveryJson(event: GroupDeliveryEvent): JsonText<GroupDelivery> {
  // The rendered message is an object that always has fields (`id` first): splice ours around them.
  return `{"index":${event.index},${event.json.slice(1, -1)},"deliveryAttempt":${event.deliveryAttempt},"late":${event.late}}` as JsonText<GroupDelivery>;
}

/** A fetch's answer as JSON text. */
export function fetchResponseJson(result: GroupFetchResult): JsonText<GroupFetchResponse> {
  return `{"memberId":${JSON.stringify(result.memberId)},"epoch":${result.epoch},"events":[${result.events.map(groupDeliveryJson).join(',')}]}` as JsonText<GroupFetchResponse>;
}
