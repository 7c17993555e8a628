import { MESSAGE_FIELDS, type MessageFieldRule, type OrdinalMessage } from '@ordinal/contract';
import { MESSAGE_COLUMNS } from '../row-mapper.js';
import { MESSAGE_SQL, messageJsonSql } from './message-json.sql.js';
import { RENDERED_MESSAGE_JSON } from './read-page.sql.js';

type Rules = Readonly<Record<keyof OrdinalMessage, MessageFieldRule>>;

describe('messageJsonSql', () => {
  it('writes each key of the contract once, in its order, the first opening the object', () => {
    // Given the SQL built from the contract's fields
    // Then the keys appear once each, in MESSAGE_FIELDS order
    const keys = [...RENDERED_MESSAGE_JSON.matchAll(/'[{,]"([A-Za-z]+)":'/g)].map((m) => m[1]);
    expect(keys).toEqual(Object.keys(MESSAGE_FIELDS));
    expect(RENDERED_MESSAGE_JSON.startsWith(`'{"id":' || (index)`)).toBe(true);
    expect(RENDERED_MESSAGE_JSON.endsWith(`'}'`)).toBe(true);
  });

  it('leaves optional fields out when their column is NULL, at their default, or with their partner', () => {
    expect(RENDERED_MESSAGE_JSON).toContain(
      `CASE WHEN stream_id IS NULL THEN '' ELSE ',"streamVersion":' || (stream_version) END`,
    );
    expect(RENDERED_MESSAGE_JSON).toContain(
      `CASE WHEN schema_version IS NULL OR schema_version = 1 THEN ''`,
    );
    expect(RENDERED_MESSAGE_JSON).toContain(
      `CASE WHEN trace_parent IS NULL THEN '' ELSE ',"traceparent":'`,
    );
  });

  it('is built once from the same list the plain reads select', () => {
    expect(MESSAGE_COLUMNS).toBe(
      'index, message_type, user_id, body, metadata, content_hash, created_at, stream_id, stream_version, tenant, schema_version, idempotency_key, correlation_id, causation_id, trace_parent, personal',
    );
    expect(messageJsonSql(MESSAGE_FIELDS, MESSAGE_SQL)).toBe(RENDERED_MESSAGE_JSON);
  });

  it('refuses a field list whose first field may be absent (the `{` goes with it)', () => {
    // Given a list that starts with an optional field
    const { streamId, ...rest } = MESSAGE_FIELDS;
    const fields = { streamId, ...rest } as Rules;
    // Then it cannot be rendered
    expect(() => messageJsonSql(fields, MESSAGE_SQL)).toThrow('must not be optional');
  });

  it('writes a string default as a quoted literal', () => {
    const fields = {
      ...MESSAGE_FIELDS,
      idempotencyKey: { optional: true, default: "it's" },
    } as unknown as Rules;
    expect(messageJsonSql(fields, MESSAGE_SQL)).toContain(
      `idempotency_key IS NULL OR idempotency_key = 'it''s'`,
    );
  });
});
