import { OrdinalHttpError } from './ordinal-http.error.js';

describe('OrdinalHttpError', () => {
  it("exposes the answer's stable code, and nothing when the body has none", () => {
    // Given answers with and without a code
    const conflict = new OrdinalHttpError(409, { statusCode: 409, code: 'version_conflict' }, 'x');
    const bare = new OrdinalHttpError(502, 'Bad Gateway', 'y');
    // Then the code is read from the JSON body only
    expect(conflict.code).toBe('version_conflict');
    expect(conflict.retryable).toBe(false);
    expect(bare.code).toBeUndefined();
    expect(bare.retryable).toBe(true);
  });

  it('does not retry a full log (507), which no retry can fix', () => {
    const full = new OrdinalHttpError(507, { statusCode: 507, code: 'log_full' }, 'z');
    expect(full.code).toBe('log_full');
    expect(full.retryable).toBe(false);
  });
});
