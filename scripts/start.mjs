#!/usr/bin/env node
// `npm start`: installs dependencies if missing, builds, and runs the server with the
// development defaults (local PostgreSQL and RabbitMQ) unless the environment says otherwise.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  console.log('Installing dependencies (npm ci)...');
  run('npm', ['ci', '--no-audit', '--no-fund']);
}
// The first build takes about half a minute and prints nothing: say what is happening.
console.log(
  'Building the server and its libraries (tsc -b: about 30 s the first time, a few seconds after)...',
);
const started = Date.now();
run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b']);
console.log(
  `Built in ${((Date.now() - started) / 1000).toFixed(1)} s; starting the server (apps/eventstore/dist/main.js)...`,
);

const child = spawn(process.execPath, [join(root, 'apps', 'eventstore', 'dist', 'main.js')], {
  cwd: root,
  stdio: 'inherit',
  env: process.env,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
