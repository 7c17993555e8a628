import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip as gunzipCallback, gzip as gzipCallback } from 'node:zlib';
import { OrdinalError } from '@ordinal/pg';

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

/** The archive's format name, in every manifest: a reader refuses one it does not know. */
export const ARCHIVE_FORMAT = 'ordinal-archive/1';

/** gzip's level for chunk files: fast (an archive runs beside appends on the same cores). */
const GZIP_LEVEL = 3;

/** One file of an archived segment: the rows with `first <= index < end`, in index order. */
export interface ArchiveChunk {
  /** The object's name in the store. */
  file: string;
  first: number;
  end: number;
  rows: number;
  /** SHA-256 (hex) of the chunk's uncompressed text. */
  sha256: string;
  /** The file's size (compressed). */
  bytes: number;
  /**
   * How many columns its rows hold, when not `manifest.columns`' (a chunk written again by a
   * scavenge or a redaction after the table gained a column: `LATER_COLUMNS`).
   */
  columns?: number;
}

/**
 * Columns the messages table gained after the archive format began, in the order they were
 * added: a chunk archived before one of them reads it as NULL (`openChunk` adds it to each
 * row). A migration that adds a column to `messages` adds it here.
 */
export const LATER_COLUMNS: readonly string[] = ['tenant'];

/** How many columns the messages table has now, for a segment archived with `manifest.columns`. */
export function currentColumnCount(manifest: SegmentManifest): number {
  return (
    manifest.columns.length + LATER_COLUMNS.filter((c) => !manifest.columns.includes(c)).length
  );
}

/** `text`'s rows (`<index>\t(<fields>)\n`) with `missing` NULL fields added at their end. */
export function padRows(text: Buffer, missing: number): Buffer {
  if (missing === 0 || text.length === 0) return text;
  let lines = 0;
  for (let at = text.indexOf(10); at >= 0; at = text.indexOf(10, at + 1)) lines++;
  const out = Buffer.allocUnsafe(text.length + lines * missing);
  let w = 0;
  let start = 0;
  for (let at = text.indexOf(10); at >= 0; at = text.indexOf(10, start)) {
    // A row's text ends with its `)`: the new fields go before it.
    w += text.copy(out, w, start, at - 1);
    out.fill(44, w, w + missing);
    w += missing;
    out[w++] = 41;
    out[w++] = 10;
    start = at + 1;
  }
  return out.subarray(0, w);
}

/**
 * What an archived segment holds and how to check it, written beside its files
 * (`<table>/manifest.json`) and kept in `log_segments.manifest`.
 *
 * Each chunk file is gzip of lines `<index>\t<row>\n`, one per row in index order, where
 * `<row>` is PostgreSQL's text form of the messages row (`m::text`, escaped as `COPY` writes
 * text: `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, `\v`). Read back (`r::messages` for each `r` of a
 * text[]), the text gives PostgreSQL the very values it stored, so every reader's SQL runs
 * over them and renders the same bytes.
 */
export interface SegmentManifest {
  format: typeof ARCHIVE_FORMAT;
  table: string;
  firstIndex: number;
  /** One past the segment's last index. */
  endIndex: number;
  rows: number;
  /**
   * The segment's checksum: SHA-256 (hex) of its chunks' SHA-256 values in index order, one per
   * line (`segmentChecksum`), so of its rows in index order, and a rewritten chunk (a scavenge)
   * needs only the chunks' checksums to make it again.
   */
  sha256: string;
  /** The chunk files' total size. */
  bytes: number;
  /** The messages table's columns, in the order the row text holds them. */
  columns: string[];
  /** The newest log migration when the segment was archived. */
  schemaVersion: string;
  /** Indices per chunk file. */
  chunkSpan: number;
  chunks: ArchiveChunk[];
  archivedAt: string;
}

/** The rows of one chunk as a reader uses them: indices ascending, and each row's text. */
export interface ChunkRows {
  indices: number[];
  rows: string[];
  /** The rows' text length, summed (what the chunk costs held in memory, roughly). */
  chars: number;
}

const UNESCAPE: Record<string, string> = {
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
};

/** A `COPY … TO` text field as the text it stands for (no NULLs: a row's text is never NULL). */
export function unescapeCopyText(field: string): string {
  if (!field.includes('\\')) return field;
  return field.replace(/\\(.)/g, (_, c: string) => UNESCAPE[c] ?? c);
}

/** The chunk's file: its text (lines as above) compressed. */
export function compressChunk(text: Buffer): Promise<Buffer> {
  return gzip(text, { level: GZIP_LEVEL });
}

/** The segment's checksum of its chunks' checksums, in order. */
export function segmentChecksum(chunkChecksums: string[]): string {
  return createHash('sha256').update(chunkChecksums.join('\n')).digest('hex');
}

const ESCAPE: Record<string, string> = {
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
};

/** A row's text as a `COPY … TO` text field (what `unescapeCopyText` reads back). */
export function escapeCopyText(text: string): string {
  return text.replace(/[\b\f\n\r\t\v\\]/g, (c) => ESCAPE[c]);
}

/** SHA-256 of bytes, hex. */
export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A chunk that does not read back as its manifest says: the file is corrupt or not the one archived. */
export function archiveCorrupt(
  manifest: SegmentManifest,
  chunk: ArchiveChunk,
  why: string,
): OrdinalError {
  return new OrdinalError(
    'archive_corrupt',
    `The archive file ${chunk.file} of segment ${manifest.table} (indices ${chunk.first}..${chunk.end - 1}) ${why}: its rows cannot be read; restore the file from a backup (ordinal segments verify ${manifest.firstIndex} checks them)`,
  );
}

/**
 * A chunk file's text, checked against the manifest (size of the text, line count and
 * SHA-256): an `archive_corrupt` error otherwise, never rows that may be wrong.
 */
export async function openChunk(
  manifest: SegmentManifest,
  chunk: ArchiveChunk,
  file: Buffer,
): Promise<Buffer> {
  let text: Buffer;
  try {
    text = await gunzip(file);
  } catch (error) {
    throw archiveCorrupt(manifest, chunk, `is not a gzip file (${(error as Error).message})`);
  }
  if (sha256(text) !== chunk.sha256)
    throw archiveCorrupt(manifest, chunk, 'does not match its checksum');
  return padRows(text, currentColumnCount(manifest) - (chunk.columns ?? manifest.columns.length));
}

/** How many rows a chunk text holds (its lines), without reading them. */
export function countRows(text: Buffer): number {
  let count = 0;
  for (let at = text.indexOf(10); at >= 0; at = text.indexOf(10, at + 1)) count++;
  return count;
}

/** The rows of a checked chunk text. */
export function chunkRows(text: Buffer): ChunkRows {
  const indices: number[] = [];
  const rows: string[] = [];
  let chars = 0;
  const lines = text.toString('utf8').split('\n');
  for (const line of lines) {
    if (line.length === 0) continue;
    const tab = line.indexOf('\t');
    indices.push(Number(line.slice(0, tab)));
    const row = unescapeCopyText(line.slice(tab + 1));
    rows.push(row);
    chars += row.length;
  }
  return { indices, rows, chars };
}

/**
 * The rows of a chunk as a reader sends them to PostgreSQL: each row's text escaped as an
 * element of an array literal (`"` and `\\` preceded by `\\`, without the enclosing quotes),
 * so a page of them is one string (`arrayLiteral`) that PostgreSQL parses into the very rows
 * `chunkRows` gives, and no driver escapes them row by row again.
 */
export interface ChunkElements {
  indices: number[];
  elements: string[];
  /** The elements' length, summed (what the chunk costs held in memory, roughly). */
  chars: number;
}

/** What `\\<byte>` of COPY's text format stands for (any other byte stands for itself). */
const COPY_ESCAPES: Record<number, number> = { 98: 8, 102: 12, 110: 10, 114: 13, 116: 9, 118: 11 };

/**
 * The rows of a checked chunk text as array literal elements (see `ChunkElements`), in one
 * pass over its bytes: COPY's escapes undone, then `"` and `\\` escaped for the literal.
 */
export function chunkElements(text: Buffer): ChunkElements {
  let quotes = 0;
  for (let i = 0; i < text.length; i++) if (text[i] === 34) quotes++;
  // Undoing COPY's escapes never lengthens a row; each quote gains a backslash.
  const out = Buffer.allocUnsafe(text.length + quotes);
  const indices: number[] = [];
  const elements: string[] = [];
  let chars = 0;
  let w = 0;
  for (let r = 0; r < text.length;) {
    // A line: <index>\t<row>\n.
    let index = 0;
    while (text[r] !== 9) index = index * 10 + (text[r++] - 48);
    r++;
    const start = w;
    for (let c = text[r]; c !== 10 && r < text.length; c = text[++r]) {
      if (c === 92) {
        const escaped = text[++r];
        const d = COPY_ESCAPES[escaped] ?? escaped;
        if (d === 92 || d === 34) out[w++] = 92;
        out[w++] = d;
      } else {
        if (c === 34) out[w++] = 92;
        out[w++] = c;
      }
    }
    r++;
    const element = out.toString('utf8', start, w);
    indices.push(index);
    elements.push(element);
    chars += element.length;
  }
  return { indices, elements, chars };
}

/** Rows' own text (`chunkRows`) as array literal elements (what `chunkElements` gives). */
export function rowElements(rows: string[]): string[] {
  return rows.map((row) => row.replace(/["\\]/g, '\\$&'));
}

/** Elements of `chunkElements` as one array literal (`{"…","…"}`): a `text[]` (`archivedSource`). */
export function arrayLiteral(elements: string[]): string {
  return elements.length === 0 ? '{}' : `{"${elements.join('","')}"}`;
}

/** A manifest read from `log_segments.manifest` or the store, checked for a format this version reads. */
export function parseManifest(value: unknown, where: string): SegmentManifest {
  const manifest = (typeof value === 'string' ? JSON.parse(value) : value) as SegmentManifest;
  if (manifest?.format !== ARCHIVE_FORMAT || !Array.isArray(manifest.chunks))
    throw new OrdinalError(
      'archive_corrupt',
      `The archive manifest in ${where} is not one this version reads (format ${JSON.stringify(manifest?.format)}, expected ${ARCHIVE_FORMAT})`,
    );
  return manifest;
}
