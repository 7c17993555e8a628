#!/usr/bin/env node
// `npm test`: every check the repository has, in the least wall time on two cores.
//
// - build: `tsc -b` (the server, the libraries, the bench support the end-to-end suites spawn);
// - lint: ESLint (type-aware) over every package, then `prettier --check .`;
// - types: `tsc -p tsconfig.spec.json --noEmit` (specs, test support, benchmarks);
// - jest: every suite, once the build is there (arguments after `npm test --` go to Jest).
//
// Lint and types need no build, so they run beside it and then beside Jest: most suites wait on
// server processes, timers and the database, and leave a core idle that the checks use (the
// three checks one after another before Jest took about two and a half minutes). A check's
// output is printed whole when it ends, between Jest's lines; the summary at the end lists every
// step, and the exit code is 1 if any failed.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (pkg, path) => join(root, 'node_modules', pkg, path);

/** Runs one step; resolves with its exit code, seconds and (unless `inherit`) its output. */
function step(name, command, args, { inherit = false, env = {} } = {}) {
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  if (!inherit) {
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
  }
  return new Promise((resolve) => {
    child.on('error', (error) => {
      output += `${error.message}\n`;
    });
    child.on('close', (code, signal) => {
      const result = { name, code: code ?? 1, signal, seconds: (Date.now() - started) / 1000 };
      if (!inherit) {
        const verdict = result.code === 0 ? 'passed' : `FAILED (exit ${code ?? signal})`;
        process.stdout.write(
          `\n[npm test] ${name} ${verdict} in ${result.seconds.toFixed(0)} s` +
            (result.code === 0 && !output.trim() ? '\n' : `:\n${output.trimEnd()}\n\n`),
        );
      }
      resolve(result);
    });
  });
}

/** `a && b`: `b` runs only when `a` passed. */
async function sequence(name, first, second) {
  const a = await first();
  if (a.code !== 0) return { ...a, name };
  const b = await second();
  return { ...b, name, seconds: a.seconds + b.seconds };
}

const node = process.execPath;
const lint = sequence(
  'lint (eslint, prettier)',
  () => step('eslint', node, [bin('eslint', 'bin/eslint.js'), '--max-warnings', '0', '.']),
  () => step('prettier --check', node, [bin('prettier', 'bin/prettier.cjs'), '--check', '.']),
);
const types = step('types (tsc -p tsconfig.spec.json --noEmit)', node, [
  bin('typescript', 'bin/tsc'),
  '-p',
  'tsconfig.spec.json',
  '--noEmit',
]);
const tests = sequence(
  'build and jest',
  () => step('build (tsc -b)', node, [bin('typescript', 'bin/tsc'), '-b']),
  () =>
    step('jest', node, [bin('jest', 'bin/jest.js'), ...process.argv.slice(2)], {
      inherit: true,
      env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim() },
    }),
);

const results = await Promise.all([lint, types, tests]);
console.log('\n[npm test] summary:');
for (const r of results)
  console.log(
    `  ${r.code === 0 ? 'passed' : 'FAILED'}  ${r.name} (${r.seconds.toFixed(0)} s of its own)`,
  );
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
