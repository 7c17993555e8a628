import type { SealedFields } from '@ordinal/log';
import type { ConsumerGroupDefinition } from './group-definition.js';

/** One member of a group as status shows it. */
export interface GroupMemberStatus {
  memberId: string;
  epoch: number;
  /** False once it was declared dead (its lease expired); its old epoch is refused. */
  alive: boolean;
  inFlight: number;
  /** The server process (host:pid) that served it last. */
  server: string;
  leaseExpiresAt: string;
  lastSeenAt: string;
}

/** A consumer group's state (`GET /api/consumer-groups/:group`). */
export interface ConsumerGroupStatus {
  group: string;
  definition: ConsumerGroupDefinition;
  /** `active` while some member is alive, `idle` otherwise. */
  state: 'active' | 'idle';
  members: GroupMemberStatus[];
  /** Every index at or below it is acknowledged, skipped or parked (or not the group's). */
  checkpoint: number;
  /** The safe head of the log now. */
  head: number;
  /** head − checkpoint. */
  lag: number;
  inFlight: number;
  /** Read from the log, waiting for a member. */
  ready: number;
  parked: number;
}

/** One event handed to a member: the message's fields, its index, and which delivery this is. */
export interface GroupDeliveryEvent {
  index: number;
  deliveryAttempt: number;
  /** Committed inside a hole the group had passed (delivered out of order, once found). */
  late: boolean;
  /** The message as the API's JSON text (`OrdinalMessage`), rendered by PostgreSQL as every reader gets it. */
  json: string;
  /** Its sealed personal fields (docs/personal-data.md): `json` holds their replacements. */
  personal?: SealedFields;
}

/** What a fetch answers: the member's lease and the events handed to it. */
export interface GroupFetchResult {
  memberId: string;
  epoch: number;
  events: GroupDeliveryEvent[];
}

/** What an ack or nack answers. */
export interface GroupAckResult {
  /** The indices the member held (acknowledged, or given back). */
  done: number[];
  /** Indices it does not hold (timed out and handed to another member, or never delivered to it). */
  notHeld: number[];
  checkpoint: number;
}

/** A parked reference. */
export interface GroupParkedEvent {
  index: number;
  reason: string;
  attempts: number;
  parkedAt: string;
}
