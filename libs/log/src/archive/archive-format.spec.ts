import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import {
  arrayLiteral,
  chunkElements,
  chunkRows,
  openChunk,
  padRows,
  sha256,
  type SegmentManifest,
} from './archive-format.js';

const require = createRequire(import.meta.url);
/** node-postgres's own serialisation of a parameter (an array: its literal). */
const { prepareValue } = require('pg/lib/utils.js') as { prepareValue: (v: unknown) => string };

/** A chunk's text as `COPY … TO` writes it: `<index>\t<row, escaped>\n` per row. */
const copyLine = (index: number, row: string) =>
  `${index}\t${row.replace(/[\\\n\r\t\b\f\v]/g, (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f', '\v': '\\v' })[c]!)}\n`;

describe('chunkElements', () => {
  const rows = [
    '(1,OrderPlaced,customer-1,,,,"{""total"": 1.99, ""orderId"": ""o-1""}",1)',
    '(2,"a\\\\b""c\nd\te\r\b\f\v",x)',
    '(3,"{""x"": ""q\\\\""z\\\\n""}","é ü 😀 ""quoted""")',
    '(4,,,)',
    '(5,"\\\\")',
  ];
  const text = Buffer.from(rows.map((row, i) => copyLine(10 + i, row)).join(''));

  it('reads the rows chunkRows reads, as node-postgres would send them', () => {
    const plain = chunkRows(text);
    const elements = chunkElements(text);
    expect(plain.rows).toEqual(rows);
    expect(elements.indices).toEqual([10, 11, 12, 13, 14]);
    expect(arrayLiteral(elements.elements)).toBe(prepareValue(rows));
    expect(arrayLiteral(elements.elements.slice(1, 3))).toBe(prepareValue(rows.slice(1, 3)));
    expect(elements.chars).toBe(elements.elements.join('').length);
  });

  it('reads an empty chunk', () => {
    expect(chunkElements(Buffer.alloc(0))).toEqual({ indices: [], elements: [], chars: 0 });
    expect(arrayLiteral([])).toBe('{}');
  });
});

describe('chunks archived before the table gained a column', () => {
  const rows = ['(7,Old,,"{""a"": ""x)""}")', '(8,"ends with )",,)'];
  const text = Buffer.from(rows.map((row, i) => copyLine(7 + i, row)).join(''));
  const chunk = { file: 'f', first: 7, end: 9, rows: 2, sha256: sha256(text), bytes: 0 };
  const manifest = (columns: string[]) =>
    ({
      table: 'messages_seg',
      firstIndex: 1,
      columns,
      chunks: [chunk],
    }) as unknown as SegmentManifest;

  it('reads each row with the later columns as NULL fields before its closing parenthesis', async () => {
    // Given a chunk written when the table had no tenant column
    const opened = await openChunk(manifest(['index', 'message_type']), chunk, gzipSync(text));
    // Then every row gets one empty (NULL) field at its end, the rest byte for byte
    expect(chunkRows(opened).rows).toEqual(['(7,Old,,"{""a"": ""x)""}",)', '(8,"ends with )",,,)']);
    expect(chunkRows(opened).indices).toEqual([7, 8]);
  });

  it('leaves a chunk of the current columns, or one written again since, as it is', async () => {
    const current = await openChunk(manifest(['index', 'tenant']), chunk, gzipSync(text));
    expect(chunkRows(current).rows).toEqual(rows);
    const rewritten = await openChunk(
      manifest(['index']),
      { ...chunk, columns: 2 },
      gzipSync(text),
    );
    expect(chunkRows(rewritten).rows).toEqual(rows);
    expect(padRows(Buffer.alloc(0), 3)).toHaveLength(0);
  });
});
