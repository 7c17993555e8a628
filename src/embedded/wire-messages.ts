/** The protocol version in a startup message (3.0), which has no type byte. */
const PROTOCOL_3 = 196608;

/** A PostgreSQL error as the wire carries it (fields C and M of an ErrorResponse). */
export interface WireError {
  code: string;
  message: string;
  /** ERROR, FATAL, PANIC (read from an answer; ERROR when unknown). */
  severity?: string;
}

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** An ErrorResponse ('E') with severity, SQLSTATE and message. */
export function errorResponse(severity: 'ERROR' | 'FATAL', error: WireError): Buffer {
  const field = (key: string, value: string) => Buffer.from(`${key}${value}\0`, 'utf8');
  return message(
    'E',
    Buffer.concat([
      field('S', severity),
      field('V', severity),
      field('C', error.code),
      field('M', error.message),
      Buffer.from([0]),
    ]),
  );
}

/** ReadyForQuery ('Z'), idle: the end of an answer. */
export function readyForQuery(): Buffer {
  return message('Z', Buffer.from('I', 'latin1'));
}

/** Whether a client message is a startup message (length, then protocol 3.0; no type byte). */
export function isStartupMessage(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && Buffer.from(bytes).readInt32BE(4) === PROTOCOL_3;
}

/** The type byte of a client message ('Q', 'P', 'S', …), or '' for a startup message. */
export function messageType(bytes: Uint8Array): string {
  return isStartupMessage(bytes) ? '' : String.fromCharCode(bytes[0] ?? 0);
}

/**
 * Reads the ErrorResponses out of a server's answer as it streams by, in chunks cut anywhere:
 * it walks message headers and keeps only what it needs (an unfinished header, an error's body).
 */
export class ErrorResponseScanner {
  readonly errors: WireError[] = [];
  /** Whether the answer held a ReadyForQuery ('Z'). */
  ready = false;
  private carry = Buffer.alloc(0);
  /** Bytes of the current message still to come, and whether it is an error being kept. */
  private remaining = 0;
  private body: Buffer[] | null = null;

  push(chunk: Uint8Array): void {
    let bytes = Buffer.concat([this.carry, Buffer.from(chunk)]);
    this.carry = Buffer.alloc(0);
    while (bytes.length > 0) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, bytes.length);
        this.body?.push(bytes.subarray(0, take));
        this.remaining -= take;
        bytes = bytes.subarray(take);
        if (this.remaining === 0 && this.body) this.finishError();
        continue;
      }
      if (bytes.length < 5) {
        this.carry = Buffer.from(bytes);
        return;
      }
      this.remaining = bytes.readInt32BE(1) - 4;
      if (bytes[0] === 0x5a /* 'Z' */) this.ready = true;
      this.body = bytes[0] === 0x45 /* 'E' */ ? [] : null;
      bytes = bytes.subarray(5);
      if (this.remaining === 0 && this.body) this.finishError();
    }
  }

  private finishError(): void {
    const fields = new Map<string, string>();
    for (const field of Buffer.concat(this.body!).toString('utf8').split('\0'))
      if (field.length > 0) fields.set(field[0], field.slice(1));
    this.errors.push({
      code: fields.get('C') ?? '',
      message: fields.get('M') ?? '',
      severity: fields.get('V') ?? fields.get('S') ?? 'ERROR',
    });
    this.body = null;
  }
}
