import { MESSAGE_COLUMNS } from '../row-mapper.js';
import { LOCKS, LOG_CHANNEL, SEQUENCE, TABLES } from '../log.constants.js';
import type { Ordering } from '../log-options.js';
import type { SqlQuery } from '@ordinal/pg';

/** One imported row, as COPY receives it. Columns left out take their defaults (created_at, transaction_id). */
export interface ImportRow {
  index: number;
  messageType: string;
  userId: string | null;
  bodyJson: string;
  metadataJson: string | null;
  contentHash: string;
  idempotencyKey: string | null;
  correlationId: string | null;
  causationId: string | null;
  traceparent: string | null;
}

/**
 * The columns a bulk import writes, in COPY order, each with how its value is taken from the
 * row. This list is the one place to change when the messages table gains a column: the COPY
 * statement and the row text both come from it.
 */
const IMPORT_COLUMNS: readonly { name: string; value(row: ImportRow): string | number | null }[] = [
  { name: 'index', value: (r) => r.index },
  { name: 'message_type', value: (r) => r.messageType },
  { name: 'user_id', value: (r) => r.userId },
  { name: 'body', value: (r) => r.bodyJson },
  { name: 'metadata', value: (r) => r.metadataJson },
  { name: 'content_hash', value: (r) => r.contentHash },
  { name: 'idempotency_key', value: (r) => r.idempotencyKey },
  { name: 'correlation_id', value: (r) => r.correlationId },
  { name: 'causation_id', value: (r) => r.causationId },
  { name: 'trace_parent', value: (r) => r.traceparent },
];

/** The import's columns, in COPY order. */
export const IMPORT_COLUMN_NAMES: readonly string[] = IMPORT_COLUMNS.map((c) => c.name);

/** `COPY … FROM STDIN` in text format for the import's columns (into `table`, the log's by default). */
export function copyImportRows(table: string = TABLES.messages): string {
  return `COPY ${table} (${IMPORT_COLUMN_NAMES.join(', ')}) FROM STDIN`;
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const NEEDS_ESCAPE = /[\\\n\r\t]/;

/** A value in COPY's text format: `\N` for null, backslash, newline, return and tab escaped. */
function copyText(value: string | number | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  return NEEDS_ESCAPE.test(value) ? value.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c]) : value;
}

/** One line of COPY text for `row` (tab-separated, newline-terminated). */
export function importRowText(row: ImportRow): string {
  let line = '';
  for (let i = 0; i < IMPORT_COLUMNS.length; i++)
    line += (i > 0 ? '\t' : '') + copyText(IMPORT_COLUMNS[i].value(row));
  return `${line}\n`;
}

/**
 * Takes the log for an import and reads the position after which its range starts.
 *
 * Gapless: the log lock and the head row, as every gapless flush. Concurrent: SHARE ROW
 * EXCLUSIVE on the messages table, which waits for every writer holding the table (the only
 * ones that can have drawn a position and not committed it) and keeps new ones out until the
 * import ends; nobody draws from the sequence meanwhile, so the import's range after the
 * highest drawn position is its own, and no writer commits above it while it is open — the
 * watermark never sees a hole there, so it neither holds nor passes one.
 */
export function lockForImport(ordering: Ordering): SqlQuery[] {
  if (ordering === 'gapless') {
    return [
      {
        text: `WITH lock AS (SELECT pg_advisory_xact_lock($1::bigint))
               SELECT h.position::text AS base FROM ${TABLES.logHead} h, lock WHERE h.id = 1 FOR UPDATE OF h`,
        values: [LOCKS.log],
      },
    ];
  }
  return [
    { text: `LOCK TABLE ${TABLES.messages} IN SHARE ROW EXCLUSIVE MODE`, values: [] },
    {
      text: `SELECT greatest((SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM ${SEQUENCE}),
                             (SELECT coalesce(max(index), 0) FROM ${TABLES.messages}))::text AS base`,
      values: [],
    },
  ];
}

/**
 * After the COPY, in the import's transaction: moves the head (gapless) or the sequence
 * (concurrent) to the last imported index and queues the NOTIFY readers wake on.
 */
export function finishImport(ordering: Ordering, head: number): SqlQuery {
  const text =
    ordering === 'gapless'
      ? `WITH moved AS (UPDATE ${TABLES.logHead} SET position = $1::bigint WHERE id = 1 RETURNING 1)
         SELECT pg_notify('${LOG_CHANNEL}', $1::text) AS notified FROM moved`
      : `SELECT setval('${SEQUENCE}', $1::bigint), pg_notify('${LOG_CHANNEL}', $1::text) AS notified`;
  return { text, values: [String(head)] };
}

/** The stored messages that carry any of `keys` (an import's repeats). */
export function readByIdempotencyKeys(keys: string[]): SqlQuery {
  return {
    text: `SELECT ${MESSAGE_COLUMNS} FROM ${TABLES.messages} WHERE index = ANY(ARRAY(
             SELECT k.index FROM ${TABLES.messageKeys} k WHERE k.idempotency_key = ANY($1::text[])))`,
    values: [keys],
  };
}
