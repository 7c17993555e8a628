import { parseInputMessage } from './input-message.parser.js';

const body = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('parseInputMessage (I4)', () => {
  it('reads content, type, user, metadata and idempotency key', () => {
    // Given a complete delivery
    const headers = {
      messageType: 'OrderPlaced',
      userId: 'customer-1',
      metadata: '{"source":"form"}',
      idempotencyKey: 'k-1',
    };
    // When it is parsed
    const parsed = parseInputMessage(body({ orderId: 'o-1' }), headers);
    // Then every field is carried over
    expect(parsed).toEqual({
      ok: true,
      message: {
        messageType: 'OrderPlaced',
        userId: 'customer-1',
        body: { orderId: 'o-1' },
        metadata: { source: 'form' },
        idempotencyKey: 'k-1',
      },
    });
  });

  it('accepts byte-array headers and an array body', () => {
    // Given headers sent as bytes
    const parsed = parseInputMessage(body([1, 2]), { messageType: Buffer.from('Tick') });
    // Then they are read as text
    expect(parsed).toEqual({
      ok: true,
      message: {
        messageType: 'Tick',
        userId: null,
        body: [1, 2],
        metadata: null,
        idempotencyKey: null,
      },
    });
  });

  it.each([
    [body({ a: 1 }), {}, /no messageType/],
    [body({ a: 1 }), undefined, /no messageType/],
    [body({ a: 1 }), { messageType: 'bad type!' }, /messageType must be/],
    [body('{not json'), { messageType: 'T' }, /not valid JSON/],
    [body('42'), { messageType: 'T' }, /object or array/],
    [body({ a: 1 }), { messageType: 'T', metadata: 'nope' }, /metadata header/],
    [body({ a: 1 }), { messageType: 'T', metadata: '[1]' }, /metadata header/],
    [body({ a: 1 }), { messageType: 'T', idempotencyKey: '' }, /idempotencyKey/],
    [
      body({ a: 1 }),
      { messageType: 'T', metadata: '{"n":9007199254740993}' },
      /metadata\.n is the number 9007199254740993/,
    ],
    [Buffer.from('{"n":1e-400}'), { messageType: 'T' }, /content\.n is the number 1e-400/],
    [Buffer.from([0x7b, 0xff, 0x7d]), { messageType: 'T' }, /not valid UTF-8/],
    [
      Buffer.from(JSON.stringify({ s: 'x'.repeat(2 * 1024 * 1024) })),
      { messageType: 'T' },
      /over the limit of 1048576/,
    ],
  ])('rejects %s with headers %j', (content, headers, reason) => {
    // Given a malformed delivery
    // When it is parsed
    const parsed = parseInputMessage(content, headers);
    // Then it is refused with the reason
    expect(parsed.ok).toBe(false);
    expect((parsed as { reason: string }).reason).toMatch(reason);
  });

  it('reads text headers as UTF-8, as strings or bytes, and refuses bytes that are not UTF-8', () => {
    // Given the key `clé-1` as a string header (amqplib decodes it as UTF-8) and as UTF-8 bytes
    for (const idempotencyKey of ['clé-1', Buffer.from('clé-1', 'utf8')]) {
      const parsed = parseInputMessage(body({}), { messageType: 'Keyed', idempotencyKey });
      // Then it is the key the body of a REST publish would name
      expect(parsed.ok && parsed.message.idempotencyKey).toBe('clé-1');
    }
    // Given a header of Latin-1 bytes (`é` as one byte, 0xE9)
    const latin1 = parseInputMessage(body({}), {
      messageType: 'Keyed',
      idempotencyKey: Buffer.from('cl\u00e9-1', 'latin1'),
    });
    // Then the delivery is refused, naming the header, instead of stored with U+FFFD
    expect(latin1).toEqual({ ok: false, reason: 'the idempotencyKey header is not valid UTF-8' });
  });

  it('takes the correlation from the correlation_id property, else the traceparent, with the causationId header', () => {
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const body = Buffer.from('{}');
    expect(
      parseInputMessage(
        body,
        { messageType: 'T', causationId: 'cmd-1', traceparent: tp },
        undefined,
        'corr-1',
      ),
    ).toMatchObject({
      ok: true,
      lineage: { correlationId: 'corr-1', causationId: 'cmd-1', traceparent: tp },
    });
    expect(parseInputMessage(body, { messageType: 'T', traceparent: tp })).toMatchObject({
      ok: true,
      lineage: {
        correlationId: '4bf92f3577b34da6a3ce929d0e0e4736',
        causationId: '4bf92f3577b34da6a3ce929d0e0e4736',
      },
    });
    expect(
      parseInputMessage(body, { messageType: 'T', traceparent: 'garbage' }),
    ).not.toHaveProperty('lineage');
    expect(parseInputMessage(body, { messageType: 'T' }, undefined, 'x'.repeat(201))).toEqual({
      ok: false,
      reason: 'correlationId must be 1-200 characters',
    });
    expect(parseInputMessage(body, { messageType: 'T', causationId: 'c' })).toEqual({
      ok: false,
      reason: 'a causationId header needs a correlation_id',
    });
    // Refused here as REST refuses it, not at the database.
    expect(parseInputMessage(body, { messageType: 'T' }, undefined, 'a\u0000b')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/correlationId has a NUL/) as unknown,
    });
    expect(
      parseInputMessage(body, { messageType: 'T', causationId: '\ud800' }, undefined, 'c-1'),
    ).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /causationId has a NUL character or an unpaired surrogate/,
      ) as unknown,
    });
  });
});
