import type { DataSource } from 'typeorm';
import { InvalidMessageError, type LiveRouter } from '@ordinal/log';
import { StreamMetadataStore } from './stream-metadata.service.js';

describe('StreamMetadataStore checks before it writes', () => {
  // Refused before any database access: neither collaborator is reached.
  const store = new StreamMetadataStore({} as DataSource, {} as LiveRouter);

  it.each(['order-1', 'order-*'])(
    'refuses on %s a maxAge beyond 100 years, naming it',
    async (id) => {
      const refused = store.set(id, { maxAge: 3_155_760_001 });
      await expect(refused).rejects.toThrow(InvalidMessageError);
      await expect(store.set(id, { maxAge: Number.MAX_SAFE_INTEGER })).rejects.toThrow(/maxAge/);
    },
  );
});
