import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** A database of the benchmark's own on the server of DATABASE_URL (the local one by default). */
export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

const server = () => process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(sql: string): Promise<void> {
  const url = new URL(server());
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `ordinal_bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(server());
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
