import { ndjsonLines, LineRefused, type NumberedLine } from './ndjson-lines.js';
import { importRowText } from '../sql/import-messages.sql.js';

// eslint-disable-next-line @typescript-eslint/require-await -- an async source is what ndjsonLines reads
async function* chunks(...parts: (string | Buffer)[]): AsyncGenerator<Buffer | string> {
  for (const p of parts) yield p;
}

async function all(source: AsyncIterable<Buffer | string>, max = 1000): Promise<NumberedLine[]> {
  const out: NumberedLine[] = [];
  for await (const batch of ndjsonLines(source, max)) out.push(...batch);
  return out;
}

describe('ndjsonLines', () => {
  it('numbers lines across chunk boundaries, skips blank ones, accepts CRLF, a BOM and a last line without a newline', async () => {
    // Given a line split inside a multi-byte character, a blank line, CRLF endings and a BOM
    const euro = Buffer.from('{"a":"€"}\n');
    const lines = await all(
      chunks('\uFEFF{"n":1}\r\n\n{"n"', ':2}\n', euro.subarray(0, 7), euro.subarray(7), '{"n":4}'),
    );
    // Then each non-blank line comes whole, with its physical line number
    expect(lines).toEqual([
      { number: 1, text: '{"n":1}' },
      { number: 3, text: '{"n":2}' },
      { number: 4, text: '{"a":"€"}' },
      { number: 5, text: '{"n":4}' },
    ]);
  });

  it('refuses a line that is not UTF-8 or too long, naming it', async () => {
    await expect(all(chunks('{}\n', Buffer.from([0x7b, 0xff, 0x7d, 0x0a])))).rejects.toMatchObject({
      line: 2,
      message: expect.stringContaining('UTF-8') as unknown,
    });
    await expect(
      all(chunks('{}\n{}\n', 'x'.repeat(50), 'y'.repeat(60)), 100),
    ).rejects.toBeInstanceOf(LineRefused);
    await expect(all(chunks('{}\n', 'x'.repeat(150) + '\n'), 100)).rejects.toMatchObject({
      line: 2,
    });
  });
});

describe('importRowText', () => {
  it('writes COPY text: tab-separated, \\N for null, backslash, tab and newlines escaped', () => {
    const text = importRowText({
      index: 7,
      messageType: 'A',
      userId: 'tab\there',
      bodyJson: '{"s":"a\\\\nb"}',
      metadataJson: null,
      contentHash: 'h',
      idempotencyKey: 'line\nbreak\r',
      correlationId: 'c-1',
      causationId: '6',
      traceparent: null,
    });
    expect(text).toBe(
      '7\tA\ttab\\there\t{"s":"a\\\\\\\\nb"}\t\\N\th\tline\\nbreak\\r\tc-1\t6\t\\N\n',
    );
  });
});
