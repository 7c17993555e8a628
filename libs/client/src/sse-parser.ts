import { isSseEventName, type SseEvent } from '@ordinal/contract';

/** One raw Server-Sent Event. */
export interface RawSseEvent {
  event: string;
  id?: string;
  data: string;
}

/**
 * An incremental parser of `text/event-stream` (the WHATWG rules that matter here: LF, CR
 * or CRLF line ends, `event`, `id`, multi-line `data`, comments).
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private id: string | undefined;
  private data: string[] = [];

  /** Feeds decoded text; returns the events completed by it. */
  push(text: string): RawSseEvent[] {
    this.buffer += text;
    const events: RawSseEvent[] = [];
    let start = 0;
    for (;;) {
      const lf = this.buffer.indexOf('\n', start);
      const cr = this.buffer.indexOf('\r', start);
      let end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (end < 0) break;
      // A CR at the very end may be the first half of CRLF: wait for the next chunk.
      if (end === cr && end === this.buffer.length - 1) break;
      const line = this.buffer.slice(start, end);
      if (end === cr && this.buffer[end + 1] === '\n') end++;
      start = end + 1;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string): RawSseEvent | null {
    if (line === '') {
      if (this.data.length === 0) {
        this.event = '';
        return null;
      }
      const event = { event: this.event || 'message', id: this.id, data: this.data.join('\n') };
      this.event = '';
      this.data = [];
      return event;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    return null;
  }
}

/**
 * The contract's event for one raw event; null for a name the stream does not send (skipped).
 * Throws a SyntaxError when the data is not JSON.
 */
export function decodeSseEvent({ event, data }: RawSseEvent): SseEvent | null {
  if (!isSseEventName(event)) return null;
  // The server's writer accepts only the contract's events, so the name says the data's shape.
  return { event, data: JSON.parse(data) as unknown } as SseEvent;
}
