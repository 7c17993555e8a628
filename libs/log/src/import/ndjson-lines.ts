import { isUtf8 } from 'node:buffer';
import { InvalidMessageError } from '../errors/index.js';

/** A line of the input: its 1-based number and its text (without the line break). */
export interface NumberedLine {
  number: number;
  text: string;
}

/** Thrown for a line the splitter itself refuses (too long, not UTF-8). */
export class LineRefused extends InvalidMessageError {
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(reason);
  }
}

/**
 * Splits a byte stream into its non-blank lines, a chunk's worth at a time (one array per
 * chunk read, so a consumer awaits once per chunk, not once per line). A line may end in
 * `\n` or `\r\n`; a byte-order mark before the first is dropped. A line over `maxLineBytes`
 * or not UTF-8 is refused naming its number; memory stays within a chunk plus one line.
 */
export async function* ndjsonLines(
  source: AsyncIterable<Buffer | string>,
  maxLineBytes: number,
): AsyncGenerator<NumberedLine[]> {
  let carry: Buffer = Buffer.alloc(0);
  let number = 0;
  const decode = (bytes: Buffer, out: NumberedLine[]) => {
    number += 1;
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 0x0d) end -= 1;
    if (end > maxLineBytes)
      throw new LineRefused(
        number,
        `is ${end} bytes, more than the ${maxLineBytes} a line may have`,
      );
    let line = bytes.subarray(0, end);
    if (number === 1 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf)
      line = line.subarray(3);
    if (!isUtf8(line)) throw new LineRefused(number, 'is not valid UTF-8; send the file as UTF-8');
    const text = line.toString('utf8');
    if (text.trim() !== '') out.push({ number, text });
  };
  for await (const piece of source) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
    const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const out: NumberedLine[] = [];
    let start = 0;
    for (let nl = data.indexOf(0x0a, start); nl >= 0; nl = data.indexOf(0x0a, start)) {
      decode(data.subarray(start, nl), out);
      start = nl + 1;
    }
    carry = data.subarray(start);
    if (carry.length > maxLineBytes + 1)
      throw new LineRefused(number + 1, `is more than the ${maxLineBytes} bytes a line may have`);
    if (out.length > 0) yield out;
  }
  if (carry.length > 0) {
    const out: NumberedLine[] = [];
    decode(carry, out);
    if (out.length > 0) yield out;
  }
}
