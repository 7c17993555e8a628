import { MESSAGE_FIELDS, type MessageFieldRule, type OrdinalMessage } from '@ordinal/contract';
import type { MessageRow } from '../row-mapper.js';
import { PLAIN_STREAM_ID, plainSql } from '../tenant.js';

type Field = keyof OrdinalMessage;

/** Where the messages table holds one wire field, and that field's value as JSON text in SQL. */
export interface FieldSql {
  /** Its column: what a plain read selects, and NULL there means the field has no value. */
  column: keyof MessageRow;
  /** Its value as JSON text (for an optional field, only used when the field is on the wire). */
  json: string;
}

/** Each wire field of the contract in the messages table (a missing or extra one won't compile). */
export const MESSAGE_SQL: Record<Field, FieldSql> = {
  id: { column: 'index', json: 'index' },
  messageType: { column: 'message_type', json: 'to_json(message_type)::text' },
  userId: { column: 'user_id', json: `coalesce(to_json(user_id)::text, 'null')` },
  // jsonb's own text: the same JSON value (jsonb writes `": "` and `", "` between members).
  body: { column: 'body', json: 'body::text' },
  metadata: { column: 'metadata', json: `coalesce(metadata::text, 'null')` },
  contentHash: { column: 'content_hash', json: 'to_json(content_hash)::text' },
  // JavaScript's toISOString() form: UTC, milliseconds, `Z`.
  createdAt: {
    column: 'created_at',
    json: `'"' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'`,
  },
  // A tenant's names are stored qualified (`acme/order-1`): readers get them plain.
  streamId: { column: 'stream_id', json: `to_json(${PLAIN_STREAM_ID})::text` },
  streamVersion: { column: 'stream_version', json: 'stream_version' },
  tenant: { column: 'tenant', json: 'to_json(tenant)::text' },
  schemaVersion: { column: 'schema_version', json: 'schema_version' },
  idempotencyKey: {
    column: 'idempotency_key',
    json: `to_json(${plainSql('idempotency_key')})::text`,
  },
  correlationId: { column: 'correlation_id', json: 'to_json(correlation_id)::text' },
  causationId: { column: 'causation_id', json: 'to_json(causation_id)::text' },
  traceparent: { column: 'trace_parent', json: 'to_json(trace_parent)::text' },
  // The pointers of the sealed personal fields: the body already holds their replacements, so a
  // reader without the personal scope gets its JSON straight from here, nothing decrypted.
  redacted: { column: 'personal', json: `(personal->'fields')::text` },
};

/** A rule's default as an SQL literal (numbers and strings: what the contract's defaults are). */
function literal(value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  throw new TypeError(`No SQL literal for the default ${String(value)}`);
}

/**
 * Builds the SQL expression rendering a message row as its wire JSON text: the fields in
 * `fields`' order, each key written as a literal and each value by its `json` expression, an
 * optional field left out when its column is NULL, equals its default, or (`presentWith`) when
 * that field is left out. The same rules as `toOrdinalMessage`, so both give the same JSON.
 */
export function messageJsonSql(
  fields: Readonly<Partial<Record<Field, MessageFieldRule>>>,
  sql: Record<Field, FieldSql>,
  tail?: string,
): string {
  const absent = (name: Field): string => {
    const rule: MessageFieldRule = fields[name] ?? MESSAGE_FIELDS[name];
    if (!rule.optional) throw new TypeError(`${name} is always on the wire`);
    if (rule.presentWith !== undefined) return absent(rule.presentWith);
    const column = sql[name].column;
    return rule.default === undefined
      ? `${column} IS NULL`
      : `${column} IS NULL OR ${column} = ${literal(rule.default)}`;
  };
  const names = Object.keys(fields) as Field[];
  // The object's `{` goes with the first key, so that one must always be there.
  if (names.length === 0 || fields[names[0]]!.optional)
    throw new TypeError('The first wire field must not be optional');
  const parts = names.map((name, i) => {
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name)) throw new TypeError(`Bad wire field name ${name}`);
    const value = `'${i === 0 ? '{' : ','}"${name}":' || (${sql[name].json})`;
    return fields[name]!.optional ? `CASE WHEN ${absent(name)} THEN '' ELSE ${value} END` : value;
  });
  return [...parts, ...(tail === undefined ? [] : [tail]), `'}'`].join('\n  || ');
}

/** The contract's fields a tombstone keeps (`kept` in `MESSAGE_FIELDS`), in its order. */
export const TOMBSTONE_FIELDS = Object.fromEntries(
  Object.entries(MESSAGE_FIELDS).filter(([, rule]) => 'kept' in rule && rule.kept),
) as Partial<Record<Field, MessageFieldRule>>;

/**
 * The SQL expression rendering a hidden row as its tombstone's wire JSON: the kept fields by
 * the same rules as a message, then `"tombstone":{"reason":…}` from the SQL expression
 * `reason` (a column or `hiddenReason()`).
 */
export function tombstoneJsonSql(reason: string): string {
  return messageJsonSql(
    TOMBSTONE_FIELDS,
    MESSAGE_SQL,
    `',"tombstone":{"reason":' || to_json(${reason})::text || '}'`,
  );
}
