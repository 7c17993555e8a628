import { parseAckMessage } from './ack-message.parser.js';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('parseAckMessage', () => {
  it('reads one acknowledgement or a list', () => {
    // Given a single ack and a list of acks
    // When they are parsed
    // Then each entry becomes an ack
    expect(parseAckMessage(json({ index: 7, serverCorrelationUuid: 'u' }), undefined)).toEqual({
      acks: [{ index: 7, serverCorrelationUuid: 'u' }],
      malformed: 0,
    });
    expect(
      parseAckMessage(json([{ index: 1, serverCorrelationUuid: 'u' }, { index: 2 }]), {
        serverCorrelationUuid: 'h',
      }).acks,
    ).toEqual([
      { index: 1, serverCorrelationUuid: 'u' },
      { index: 2, serverCorrelationUuid: 'h' },
    ]);
  });

  it('counts malformed entries', () => {
    // Given broken bodies
    // When they are parsed
    // Then nothing is acknowledged and each is counted
    expect(parseAckMessage(Buffer.from('nope'), undefined)).toEqual({ acks: [], malformed: 1 });
    expect(
      parseAckMessage(
        json([
          { index: '3', serverCorrelationUuid: 'u' },
          { index: 0, serverCorrelationUuid: 'u' },
          { index: 4 },
        ]),
        undefined,
      ),
    ).toEqual({ acks: [], malformed: 3 });
  });
});
