#!/usr/bin/env node
// `npm run pack`: builds, then writes installable tarballs of the published packages to
// dist/packages/: @ordinal/nestjs (top-level src/), the libraries it depends on, and
// @ordinal/client. Each tarball holds package.json and the built dist/ (no sources, no specs),
// and @ordinal/nestjs its bin/ shim.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Workspace folder → the folder of its TypeScript sources (its tsconfig's rootDir). */
export const PUBLISHED = {
  'libs/contract': 'libs/contract/src',
  'libs/pg': 'libs/pg/src',
  'libs/ownership': 'libs/ownership/src',
  'libs/log': 'libs/log/src',
  'libs/event-sourcing': 'libs/event-sourcing/src',
  'libs/subscriptions': 'libs/subscriptions/src',
  'libs/projections': 'libs/projections/src',
  'libs/client': 'libs/client/src',
  src: 'src',
};
const destination = join(root, 'dist', 'packages');

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    ...options,
  });
  if (r.status !== 0) {
    process.stderr.write(r.stdout ?? '');
    throw new Error(`${cmd} ${args.join(' ')} failed with ${r.status}`);
  }
  return r.stdout;
}

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else yield path;
  }
}

/**
 * tsc -b never deletes the output of a source that was removed or renamed: drop such stale
 * outputs so a tarball ships only what the sources build. (Deleting in place, not the whole
 * dist/, keeps a server that runs from dist/ meanwhile working.)
 */
function pruneStale(workspace, sources) {
  const dist = join(root, workspace, 'dist');
  if (!existsSync(dist)) return 0;
  let pruned = 0;
  for (const file of files(dist)) {
    const rel = relative(dist, file);
    const base = rel.replace(/\.d\.ts\.map$|\.d\.ts$|\.js\.map$|\.js$/, '');
    if (base === rel) continue; // .tsbuildinfo and the like
    if (existsSync(join(root, sources, `${base}.ts`))) continue;
    rmSync(file);
    pruned++;
  }
  return pruned;
}

export function pack() {
  run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b']);
  rmSync(destination, { recursive: true, force: true });
  mkdirSync(destination, { recursive: true });
  const tarballs = [];
  for (const [workspace, sources] of Object.entries(PUBLISHED)) pruneStale(workspace, sources);
  const workspaces = Object.keys(PUBLISHED).flatMap((w) => ['-w', w]);
  // --ignore-scripts: the packages' prepack (tsc -b, for a plain `npm pack` in a package) already ran above.
  const out = run('npm', [
    'pack',
    '--json',
    '--ignore-scripts',
    '--pack-destination',
    destination,
    ...workspaces,
  ]);
  for (const entry of JSON.parse(out)) {
    const shipped = entry.files.map((f) => f.path);
    const leaked = shipped.filter(
      (p) =>
        !p.startsWith('dist/') &&
        !p.startsWith('bin/') &&
        p !== 'package.json' &&
        !/^(README|LICENSE)/i.test(p),
    );
    if (leaked.length > 0 || shipped.some((p) => /\.(spec|int-spec|e2e-spec)\./.test(p))) {
      throw new Error(
        `${entry.name} would ship ${leaked.join(', ') || 'specs'}; check its "files"`,
      );
    }
    if (!shipped.includes('dist/index.js'))
      throw new Error(`${entry.name} has no dist/index.js: was it built?`);
    tarballs.push(join(destination, entry.filename));
  }
  return tarballs;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const tarball of pack()) console.log(relative(root, tarball));
}
