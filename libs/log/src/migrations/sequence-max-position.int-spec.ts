import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { MAX_POSITION, runMigrations } from '@ordinal/pg';
import { LOG_MIGRATIONS } from './index.js';

const BEFORE = LOG_MIGRATIONS.filter((m) => m.name !== 'SequenceMaxPosition1764460800211');

describe('SequenceMaxPosition1764460800211: the sequence stops at the last exact index', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  const seqmax = async () =>
    (
      await db.query<{ max: string }>(
        `SELECT max_value::text AS max FROM pg_sequences WHERE sequencename = 'messages_index_seq'`,
      )
    )[0].max;
  const nextval = () => db.query(`SELECT nextval('messages_index_seq')`);

  beforeEach(async () => {
    db = await createTestDatabase(undefined, { blank: true });
    dataSource = new DataSource({ type: 'postgres', url: db.url, extra: { max: 2 } });
    await dataSource.initialize();
  });
  afterEach(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('sets MAXVALUE 2^53 − 1, so nextval refuses with SQLSTATE 2200H past it', async () => {
    // Given a migrated log whose sequence has handed out 2^53 − 2
    await runMigrations(dataSource, LOG_MIGRATIONS);
    expect(await seqmax()).toBe(String(MAX_POSITION));
    await db.query(`SELECT setval('messages_index_seq', $1)`, [String(MAX_POSITION - 1)]);
    // When two more positions are drawn
    await nextval();
    // Then the first is the last exact index, and the next one is refused
    await expect(nextval()).rejects.toMatchObject({ code: '2200H' });
  });

  it('caps a sequence already past it where it stands, so it hands out nothing more', async () => {
    // Given a log migrated before this rule whose sequence went past 2^53 − 1
    await runMigrations(dataSource, BEFORE);
    await db.query(`SELECT setval('messages_index_seq', $1)`, ['9007199254740995']);
    // When the migration runs
    await runMigrations(dataSource, LOG_MIGRATIONS);
    // Then the sequence is capped at its last value
    expect(await seqmax()).toBe('9007199254740995');
    await expect(nextval()).rejects.toMatchObject({ code: '2200H' });
  });
});
