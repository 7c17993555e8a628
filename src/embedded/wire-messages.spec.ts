import {
  errorResponse,
  ErrorResponseScanner,
  isStartupMessage,
  messageType,
  readyForQuery,
} from './wire-messages.js';

describe('wire messages of the embedded database guard', () => {
  const full = {
    code: '53100',
    message: 'could not write to file "pg_wal/xlogtemp.42": No space left on device',
  };

  it('finds the errors in an answer however it is cut into chunks', () => {
    // Given an answer: a row description-like message, an error, a ready-for-query
    const other = Buffer.concat([Buffer.from('T'), Buffer.from([0, 0, 0, 6, 0, 0])]);
    const answer = Buffer.concat([other, errorResponse('ERROR', full), readyForQuery()]);
    for (let cut = 1; cut < answer.length; cut += 3) {
      // When it streams by in two pieces cut anywhere
      const scanner = new ErrorResponseScanner();
      scanner.push(answer.subarray(0, cut));
      scanner.push(answer.subarray(cut));
      // Then the one error is read whole
      expect(scanner.errors).toEqual([{ ...full, severity: 'ERROR' }]);
      expect(scanner.ready).toBe(true);
    }
  });

  it('tells a startup message from a typed one', () => {
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8, 0);
    startup.writeInt32BE(196608, 4);
    expect(isStartupMessage(startup)).toBe(true);
    expect(messageType(startup)).toBe('');
    expect(messageType(Buffer.from([0x51, 0, 0, 0, 5, 0]))).toBe('Q');
    expect(readyForQuery()).toEqual(Buffer.from([0x5a, 0, 0, 0, 5, 0x49]));
  });
});
