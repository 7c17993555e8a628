import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { contextFromTraceparent, linksTo, ordinalTracer } from './tracer.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';
import {
  correlationOf,
  currentCorrelation,
  runOutsideCorrelation,
  runWithCorrelation,
} from './correlation-context.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('traceparent', () => {
  it('parses a W3C traceparent and formats it back', () => {
    const parsed = parseTraceparent(TRACEPARENT);
    expect(parsed).toMatchObject({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      isRemote: true,
    });
    expect(formatTraceparent(parsed)).toBe(TRACEPARENT);
    expect(parseTraceparent(TRACEPARENT.toUpperCase())).not.toBeNull();
  });

  it('ignores malformed and all-zero ones (a new trace starts, the request is not refused)', () => {
    for (const bad of [
      '',
      'x',
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`,
      undefined,
      null,
    ]) {
      expect(parseTraceparent(bad)).toBeNull();
    }
    expect(formatTraceparent(null)).toBeNull();
  });

  it('links each distinct stored context once, skipping missing ones', () => {
    const other = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b8-00';
    expect(
      linksTo([TRACEPARENT, null, TRACEPARENT, other, 'bad']).map((l) => l.context.spanId),
    ).toEqual(['00f067aa0ba902b7', '00f067aa0ba902b8']);
    expect(linksTo([TRACEPARENT, other], 1)).toHaveLength(1);
  });
});

describe('without an OpenTelemetry SDK', () => {
  it('records nothing: spans are non-recording and carry the stored context on unchanged', () => {
    const span = ordinalTracer().startSpan(
      'ordinal.append',
      {},
      contextFromTraceparent(TRACEPARENT),
    );
    expect(span.isRecording()).toBe(false);
    expect(formatTraceparent(span.spanContext())).toBe(TRACEPARENT);
    const orphan = ordinalTracer().startSpan('ordinal.flush', {}, ROOT_CONTEXT);
    expect(trace.isSpanContextValid(orphan.spanContext())).toBe(false);
  });
});

describe('correlation context', () => {
  it('is what the code inside runWithCorrelation sees, across awaits, and nothing outside', async () => {
    const context = { correlationId: 'c', causationId: 'k', traceparent: null };
    await runWithCorrelation(context, async () => {
      await new Promise((r) => setImmediate(r));
      expect(currentCorrelation()).toBe(context);
      runOutsideCorrelation(() => expect(currentCorrelation()).toBeUndefined());
    });
    expect(currentCorrelation()).toBeUndefined();
  });

  it('of a stored message: its correlation, caused by its index; an old message starts its own', () => {
    const base = {
      id: 42,
      correlationId: 'c',
      causationId: 'x',
      traceparent: TRACEPARENT,
    } as never;
    expect(correlationOf(base)).toEqual({
      correlationId: 'c',
      causationId: '42',
      traceparent: TRACEPARENT,
    });
    expect(
      correlationOf({ id: 7, correlationId: null, causationId: null, traceparent: null } as never),
    ).toEqual({ correlationId: '7', causationId: '7', traceparent: null });
  });
});
