import { MAX_AGE_LIMIT_SECONDS } from '@ordinal/event-sourcing';
import { MAX_AGE_SECONDS } from './stream-metadata.dto.js';

describe('StreamMetadataDto', () => {
  it('bounds maxAge where the store does (100 years in seconds)', () => {
    expect(MAX_AGE_SECONDS).toBe(MAX_AGE_LIMIT_SECONDS);
    expect(MAX_AGE_SECONDS).toBe(100 * 365.25 * 86_400);
  });
});
