import {
  MESSAGE_FIELDS,
  type MessageFieldRule,
  type OrdinalMessage,
  type OrdinalRecord,
  type OrdinalTombstone,
} from '@ordinal/contract';
import type { StoredMessage } from './message.js';

type Field = keyof OrdinalMessage;

const NAMES = Object.keys(MESSAGE_FIELDS) as Field[];

/** Whether `name` is on the wire for this message (MESSAGE_FIELDS' rules). */
function isOnTheWire(message: StoredMessage, name: Field): boolean {
  const rule: MessageFieldRule = MESSAGE_FIELDS[name];
  if (!rule.optional) return true;
  if (rule.presentWith !== undefined) return isOnTheWire(message, rule.presentWith);
  const value = message[name];
  return value !== null && value !== rule.default;
}

/**
 * The message as the wire carries it: the contract's fields in its order, an optional one only
 * when set (not null, not its default; with `presentWith`, when that field is). PostgreSQL
 * renders reads as the same JSON from the same list (`RENDERED_MESSAGE_JSON`).
 */
export function toOrdinalMessage(message: StoredMessage): OrdinalMessage {
  const wire: Partial<Record<Field, unknown>> = {};
  for (const name of NAMES) if (isOnTheWire(message, name)) wire[name] = message[name];
  return wire as OrdinalMessage;
}

/** The fields a tombstone keeps, in the contract's order. */
const KEPT = NAMES.filter((name) => 'kept' in MESSAGE_FIELDS[name]);

/**
 * The position as the wire carries it: the message (`toOrdinalMessage`) or, when it reads back
 * as a tombstone, its kept fields by the same rules and `tombstone: {reason}` — the JSON
 * PostgreSQL renders for rendered reads (`tombstoneJsonSql`).
 */
export function toOrdinalRecord(message: StoredMessage): OrdinalRecord {
  if (message.tombstone === undefined) return toOrdinalMessage(message);
  const wire: Partial<Record<Field, unknown>> = {};
  for (const name of KEPT) if (isOnTheWire(message, name)) wire[name] = message[name];
  return { ...wire, tombstone: { reason: message.tombstone } } as OrdinalTombstone;
}

/** A field of a wire message as StoredMessage holds it: an absent one is its default, else null. */
export function storedValue<K extends Field>(
  wire: Partial<OrdinalMessage>,
  name: K,
): StoredMessage[K] {
  const rule: MessageFieldRule = MESSAGE_FIELDS[name];
  return (wire[name] ?? (rule.optional ? rule.default : undefined) ?? null) as StoredMessage[K];
}
