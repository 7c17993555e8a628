import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter, TenantDeletion } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { STREAM_WINDOW_COLUMNS, streamWindow, type StreamWindowRow } from './stream-window.sql.js';
import { readStreamEvents } from './read-stream-events.sql.js';

/** The stream window of a deleted tenant's stream (docs/tenants.md#deleting-a-tenant). */
describe('streamWindow of a tenant’s stream', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startLogContext(db.url, { startMarker: false });
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const window = async (streamId: string) =>
    (
      await db.query<StreamWindowRow>(
        `WITH ${streamWindow('$2')} SELECT ${STREAM_WINDOW_COLUMNS}`,
        [streamId, streamId.split('-')[0]],
      )
    )[0];
  const events = async (streamId: string) => {
    const query = readStreamEvents(streamId, streamId.split('-')[0], 0, 100, 100, false);
    return (await db.query<{ events: unknown[] }>(query.text, query.values))[0].events;
  };

  it('is tombstoned, every version deleted, once its tenant is deleted; other tenants’ and untenanted streams are not', async () => {
    const writer = app.get(LogWriter);
    for (const tenant of ['acme', 'globex', undefined])
      await writer.append({
        tenant,
        stream: { streamId: 'order-1', expectedVersion: 'no_stream' },
        messages: [
          { messageType: 'OrderStep', body: {} },
          { messageType: 'OrderStep', body: {} },
        ],
      });
    expect(await window('acme/order-1')).toMatchObject({ state: 'live', deleted_through: '0' });
    expect(await events('acme/order-1')).toHaveLength(2);

    await app.get(TenantDeletion).delete('acme');
    expect(await window('acme/order-1')).toMatchObject({
      state: 'tombstoned',
      deleted_through: '2',
    });
    expect(await events('acme/order-1')).toEqual([]);
    for (const id of ['globex/order-1', 'order-1']) {
      expect(await window(id)).toMatchObject({ state: 'live', deleted_through: '0' });
      expect(await events(id)).toHaveLength(2);
    }
  });
});
