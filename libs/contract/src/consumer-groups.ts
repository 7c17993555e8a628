import type { OrdinalMessage } from './message.js';

/**
 * One event a consumer group hands to a member (`fetch` answers a list of them; the group's
 * stream sends each as a `message` frame with `id: <index>`): the message's fields, its index,
 * which delivery of it this is (1 the first time), and whether it arrived late (committed inside
 * a hole the group had passed).
 */
export type GroupDelivery = OrdinalMessage & {
  index: number;
  deliveryAttempt: number;
  late: boolean;
};

/** `POST /api/consumer-groups/:group/fetch`: the member's lease and its events. */
export interface GroupFetchResponse {
  memberId: string;
  epoch: number;
  events: GroupDelivery[];
}

/** `POST …/ack` and `POST …/nack`: what the member held (done now), what it did not, and the checkpoint. */
export interface GroupSettleResponse {
  /** `acknowledged` for an ack, `nacked` for a nack. */
  acknowledged?: number[];
  nacked?: number[];
  /** Indices the member does not hold (handed to another member after its ack timeout, or never its). */
  notHeld: number[];
  checkpoint: number;
}

/**
 * The events of a consumer group's stream, `GET /api/consumer-groups/:group/stream`: the
 * member's lease first, then its events, and heartbeats.
 */
export type GroupSseEvent =
  /** Once, first: the member's id and lease epoch (send both with every ack and nack). */
  | { event: 'lease'; data: { memberId: string; epoch: number } }
  /** One event handed to the member, with `id: <index>`. */
  | { event: 'message'; data: GroupDelivery }
  /** On a timer while the member has nothing new: its lease, renewed. */
  | { event: 'heartbeat'; data: { memberId: string; epoch: number } };

/** The name of a consumer group stream event. */
export type GroupSseEventName = GroupSseEvent['event'];
