import pg from 'pg';

export default async function globalTeardown() {
  // The migrated template (global-setup.mjs) goes with the run.
  const template = globalThis.__ORDINAL_TEMPLATE__;
  if (template) {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  }
  for (const container of globalThis.__ORDINAL_CONTAINERS__ ?? []) await container.stop();
}
