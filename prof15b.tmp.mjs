import { spawn, execFileSync } from 'node:child_process';
import pg from 'pg';
const db = 'ordinal_prof15';
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
await admin.query(`CREATE DATABASE ${db}`);
const server = spawn(process.execPath, ['apps/eventstore/dist/main.js'], { env: { ...process.env, DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${db}`, PORT: '18777', ORDINAL_LOG_FORMAT: 'json' }, stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((r) => server.stdout.on('data', (c) => /listening on/.test(String(c)) && r()));
for (let i = 0; i < 2; i++) {
  let t = performance.now();
  execFileSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}\n', '-X', 'POST', '-H', 'authorization: Bearer dev-ordinal-token', '-H', 'content-type: application/x-ndjson', '-T', '/tmp/prof15.ndjson', 'http://127.0.0.1:18777/api/events/import'], { stdio: 'inherit' });
  console.log('curl ms', performance.now() - t);
  t = performance.now();
  execFileSync(process.execPath, ['src/bin/ordinal.mjs', 'publish', '--file', '/tmp/prof15.ndjson'], { env: { ...process.env, ORDINAL_URL: 'http://127.0.0.1:18777', ORDINAL_TOKEN: 'dev-ordinal-token' }, stdio: ['ignore', 'ignore', 'ignore'] });
  console.log('cli ms', performance.now() - t);
}
server.kill('SIGINT');
await new Promise((r) => server.on('exit', r));
await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
await admin.end();
