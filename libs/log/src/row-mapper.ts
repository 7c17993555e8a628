import { MESSAGE_FIELDS, type OrdinalMessage, type TombstoneReason } from '@ordinal/contract';
import { toPosition } from '@ordinal/pg';
import type { SealedFields, StoredMessage } from './message.js';
import { storedValue } from './ordinal-message.js';
import { MESSAGE_SQL } from './sql/message-json.sql.js';
import { HIDDEN_REASON } from './sql/hidden-reason.sql.js';
import { unqualified } from './tenant.js';

/** A row of the messages table as the reader's SQL selects it. */
export interface MessageRow {
  index: string | number;
  message_type: string;
  user_id: string | null;
  body: unknown;
  metadata: Record<string, unknown> | null;
  content_hash: string;
  created_at: Date | string;
  stream_id: string | null;
  stream_version: string | number | null;
  /** The tenant (docs/tenants.md): `stream_id` and `idempotency_key` are then qualified. */
  tenant?: string | null;
  schema_version: number;
  idempotency_key: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  trace_parent: string | null;
  /** The sealed personal fields (docs/personal-data.md), else null (absent: none). */
  personal?: SealedFields | null;
  /** Why the position reads back as a tombstone (`MESSAGE_READ_COLUMNS`), else null or absent. */
  tombstone?: TombstoneReason | null;
}

/** A row of a plain read as the log's message (positions through `toPosition`). */
export function toStoredMessage(row: MessageRow): StoredMessage {
  const hidden = row.tombstone ?? null;
  return {
    ...(hidden === null ? {} : { tombstone: hidden }),
    id: toPosition(row.index),
    messageType: row.message_type,
    userId: row.user_id,
    body: hidden === null ? row.body : null,
    metadata: hidden === null ? row.metadata : null,
    contentHash: row.content_hash,
    createdAt: new Date(row.created_at).toISOString(),
    streamId: unqualified(row.tenant, row.stream_id),
    streamVersion: row.stream_version === null ? null : toPosition(row.stream_version),
    tenant: row.tenant ?? null,
    schemaVersion: row.schema_version,
    idempotencyKey: unqualified(row.tenant, row.idempotency_key),
    correlationId: row.correlation_id ?? null,
    causationId: row.causation_id ?? null,
    traceparent: row.trace_parent ?? null,
    redacted: hidden === null ? (row.personal?.fields ?? null) : null,
    ...(hidden === null && row.personal ? { personal: row.personal } : {}),
  };
}

/** The columns every read selects: each wire field's (`MESSAGE_SQL`), in the contract's order. */
export const MESSAGE_COLUMNS = (Object.keys(MESSAGE_FIELDS) as Array<keyof OrdinalMessage>)
  .map((name) => MESSAGE_SQL[name].column)
  .join(', ');

/**
 * What a reader selects from the messages table: `MESSAGE_COLUMNS` and `tombstone`, why the
 * position reads back as a tombstone (docs/lifecycle.md), NULL for a message.
 */
export const MESSAGE_READ_COLUMNS = `${MESSAGE_COLUMNS}, ${HIDDEN_REASON} AS tombstone`;

/** A row of a rendered read (readRenderedPage): what filters need, and the message as JSON text. */
export interface RenderedRow {
  index: string | number;
  message_type: string;
  user_id: string | null;
  /** The stream (null outside any), plain: read with the row so access rules need not parse `json`. */
  stream_id?: string | null;
  /** The tenant (docs/tenants.md), read with the row so a tenant's filter need not parse `json`. */
  tenant?: string | null;
  json: string;
  /** Why the position is a tombstone (`json` is then the tombstone's), else null. */
  tombstone?: TombstoneReason | null;
  /** The sealed personal fields (docs/personal-data.md), else null. */
  personal?: SealedFields | null;
  /** Running total of stored bytes up to this row (see readRenderedPage). */
  stored_through?: string | number;
}

/** The API's view of a message, as `RENDERED_MESSAGE_JSON` writes it, less the plain fields. */
type RenderedFields = Omit<OrdinalMessage, 'id' | 'messageType' | 'userId'>;

/**
 * A message read with its JSON already rendered by PostgreSQL (`json`, the message as the
 * HTTP API shows it). Index, type and user are plain fields (filters use them); the rest is
 * parsed from `json` the first time something asks, which a Server-Sent Events stream never
 * does. The lazy fields are getters on the prototype: copy one with `toStoredMessage`-like
 * code, not with an object spread.
 */
export class RenderedMessage implements StoredMessage {
  readonly id: number;
  readonly messageType: string;
  readonly userId: string | null;
  readonly tombstone?: TombstoneReason;
  readonly personal?: SealedFields;
  private fields: RenderedFields | null = null;
  private readonly streamColumn: string | null | undefined;
  private readonly tenantColumn: string | null | undefined;

  constructor(
    row: RenderedRow,
    readonly json: string = row.json,
  ) {
    this.id = toPosition(row.index);
    this.messageType = row.message_type;
    this.userId = row.user_id;
    this.streamColumn = row.stream_id;
    this.tenantColumn = row.tenant;
    if (row.tombstone) this.tombstone = row.tombstone;
    else if (row.personal) this.personal = row.personal;
  }

  private get parsed(): RenderedFields {
    return (this.fields ??= JSON.parse(this.json) as RenderedFields);
  }

  get body(): unknown {
    return this.parsed.body ?? null;
  }
  get metadata(): Record<string, unknown> | null {
    return this.parsed.metadata ?? null;
  }
  get contentHash(): string {
    return this.parsed.contentHash ?? '';
  }
  get createdAt(): string {
    return this.parsed.createdAt;
  }
  get streamId(): string | null {
    if (this.streamColumn !== undefined) return this.streamColumn;
    return storedValue(this.parsed, 'streamId');
  }
  get streamVersion(): number | null {
    return storedValue(this.parsed, 'streamVersion');
  }
  get tenant(): string | null {
    if (this.tenantColumn !== undefined) return this.tenantColumn;
    return storedValue(this.parsed, 'tenant');
  }
  get schemaVersion(): number {
    return storedValue(this.parsed, 'schemaVersion');
  }
  get idempotencyKey(): string | null {
    return storedValue(this.parsed, 'idempotencyKey');
  }
  get correlationId(): string | null {
    return storedValue(this.parsed, 'correlationId');
  }
  get causationId(): string | null {
    return storedValue(this.parsed, 'causationId');
  }
  get traceparent(): string | null {
    return storedValue(this.parsed, 'traceparent');
  }
  get redacted(): string[] | null {
    return storedValue(this.parsed, 'redacted');
  }
}

/** The JSON PostgreSQL rendered for a message (a rendered read), else undefined. */
export function renderedJson(message: StoredMessage): string | undefined {
  return message instanceof RenderedMessage ? message.json : undefined;
}
