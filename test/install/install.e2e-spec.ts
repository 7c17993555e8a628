import { execFile, spawn } from 'node:child_process';
import { copyFileSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/test-database.js';
import { guideFiles, guideTsconfig, writeFiles } from './sample-service.js';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GUIDE = join(root, 'docs', 'getting-started.md');
/** Guides whose `// src/…` blocks join the sample service (compiled; getting-started's are also run). */
const GUIDES = [GUIDE, join(root, 'docs', 'projections.md')];
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
/** The peer dependencies the guide lists, at the versions this repository tests with; plus what the sample itself uses. */
const PEERS = ['@nestjs/common', '@nestjs/core', '@nestjs/cqrs', '@nestjs/typeorm', 'typeorm', 'pg', 'reflect-metadata', 'rxjs', '@nestjs/config'].map(
  (name) => `${name}@${rootPackage.dependencies[name]}`,
);
const TOOLS = ['typescript', '@types/node'].map((name) => `${name}@${rootPackage.devDependencies[name]}`);

/** The environment of child processes: none of the npm_* variables `npm test` sets (they would point npm at this repository). */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  delete env.NODE_OPTIONS; // jest's --experimental-vm-modules is not the sample's business
  return { ...env, ...extra };
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    yield path;
    if (stat.isDirectory() && !stat.isSymbolicLink()) yield* walk(path);
  }
}

/** Runs `node <script>` in the sample; resolves with its stdout, rejects with its output on a non-zero exit. */
function node(cwd: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`node ${args.join(' ')} exited ${code}:\n${out}\n${err}`))));
  });
}

const lastJson = (out: string): Record<string, any> => JSON.parse(out.trim().split('\n').pop()!) as Record<string, any>;

describe('installing @ordinal/nestjs from the tarballs into a service outside the repository', () => {
  let dir: string;
  const variants = [
    { name: 'ESM', folder: '.' },
    { name: 'CommonJS', folder: 'cjs' },
  ];

  beforeAll(async () => {
    // Given the tarballs `npm run pack` writes
    await run(process.execPath, [join(root, 'scripts', 'pack.mjs')], { cwd: root, env: childEnv() });
    const tarballs = readdirSync(join(root, 'dist', 'packages')).map((name) => join(root, 'dist', 'packages', name));
    // And a fresh service folder outside the repository: ESM at its root, CommonJS in cjs/
    dir = mkdtempSync(join(tmpdir(), 'ordinal-install-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
    for (const { folder } of variants) {
      writeFiles(join(dir, folder), guideFiles(...GUIDES));
      copyFileSync(join(root, 'test', 'install', 'fixtures', 'check.ts'), join(dir, folder, 'src', 'check.ts'));
      writeFileSync(join(dir, folder, 'tsconfig.json'), guideTsconfig(GUIDE));
    }
    writeFileSync(join(dir, 'cjs', 'package.json'), JSON.stringify({ name: 'shop-cjs', private: true, type: 'commonjs' }));
    // When the tarballs and the peer dependencies are installed from the registry (the npm cache first)
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, ...PEERS, ...TOOLS], { cwd: dir, env: childEnv(), maxBuffer: 16 * 1024 * 1024 });
  }, 240_000);

  afterAll(() => {
    // ORDINAL_KEEP_INSTALL=1 keeps the service folder to inspect (its path is printed).
    if (dir && process.env.ORDINAL_KEEP_INSTALL) console.log(`install test folder kept: ${dir}`);
    else if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs real folders (no symlinks) and one copy of each Nest package', () => {
    const modules = join(dir, 'node_modules');
    const entries = [...walk(modules)].map((path) => relative(modules, path));
    expect(entries.filter((path) => !path.startsWith('.bin') && lstatSync(join(modules, path)).isSymbolicLink())).toEqual([]);
    // A package's own folder is node_modules/@nestjs/<name>, at the top or nested in another's node_modules
    const names = entries.flatMap((path) => /(?:^|\/node_modules\/)(@nestjs\/[^/]+)\/package\.json$/.exec(path)?.[1] ?? []);
    expect(names.sort()).toEqual([...new Set(names)].sort());
    expect(names).toEqual(expect.arrayContaining(['@nestjs/common', '@nestjs/core', '@nestjs/cqrs', '@nestjs/typeorm']));
    const ordinal = readdirSync(join(modules, '@ordinal')).sort();
    expect(ordinal).toEqual(['client', 'event-sourcing', 'log', 'nestjs', 'projections', 'subscriptions']);
    // And the client depends on nothing (no Nest)
    const client = JSON.parse(readFileSync(join(modules, '@ordinal', 'client', 'package.json'), 'utf8')) as Record<string, unknown>;
    expect([client.dependencies, client.peerDependencies]).toEqual([undefined, undefined]);
    // And the packages hold their built dist/ only (no sources, no specs)
    const shipped = [...walk(join(modules, '@ordinal'))].map((path) => relative(join(modules, '@ordinal'), path));
    expect(shipped.filter((path) => /\.ts$/.test(path) && !/\.d\.ts$/.test(path))).toEqual([]);
    expect(shipped.filter((path) => /\.(spec|int-spec|e2e-spec)\.(js|d\.ts)$/.test(path))).toEqual([]);
  });

  it.each(variants)("compiles the guide's files and the driver with tsc as $name", async ({ folder }) => {
    await run(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, folder, 'tsconfig.json')], { cwd: dir, env: childEnv() });
    const built = readdirSync(join(dir, folder, 'dist'));
    expect(built).toEqual(expect.arrayContaining(['app.module.js', 'check.js', 'orders', 'shipping']));
  }, 120_000);

  describe.each(variants)('the sample service as $name', ({ folder }) => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase('ordinal_install');
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('saves, loads, refuses a conflicting save, ships, and the projection row is there after waitFor', async () => {
      const result = lastJson(await node(join(dir, folder), ['dist/check.js'], { DATABASE_URL: db.url }));
      expect(result).toEqual({
        placedVersion: 1,
        loaded: { customer: 'alice', total: 42, version: 1 },
        conflict: { code: 'version_conflict', name: 'VersionConflictError' },
        shippedVersion: 2,
        missing: 'aggregate_not_found',
        row: { orderId: 'order-1', customer: 'alice', total: 42, status: 'shipped' },
        // A service writes no StartMarker unless it asks for one
        markers: 0,
        async: { shipped: true, version: 2 },
        // projections.md's feature started later on the same log: it replays order-1 and follows order-2
        shipping: { shippedVersion: 2, statuses: [['order-1', 'alice', 'shipped'], ['order-2', 'bob', 'shipped']] },
      });
      // And its migration was recorded once, with Ordinal's
      const migrations = await db.query<{ name: string }>('SELECT name FROM ordinal_migrations ORDER BY id');
      expect(migrations.map((m) => m.name)).toEqual(expect.arrayContaining(['CreateOrderSummaries1767225600000', 'CreateOrderStatuses1767312000000']));
    }, 60_000);

    it("passes the guide's testing-kit specs under node:test", async () => {
      const specs = [...walk(join(dir, folder, 'dist'))].filter((path) => path.endsWith('.spec.js')).map((path) => relative(join(dir, folder), path));
      expect(specs).toHaveLength(2);
      const out = await node(join(dir, folder), ['--test', ...specs], { DATABASE_URL: serverUrl() });
      expect(out).toMatch(/# pass 4/);
      expect(out).toMatch(/# fail 0/);
    }, 60_000);
  });

  it('starts two instances at the same moment on one database: both come up, each migration applied once', async () => {
    const db = await createTestDatabase('ordinal_install');
    try {
      // When two processes start the sample service at once on a fresh database
      const [a, b] = await Promise.all([node(dir, ['dist/check.js', 'start'], { DATABASE_URL: db.url }), node(join(dir, 'cjs'), ['dist/check.js', 'start'], { DATABASE_URL: db.url })]);
      // Then both come up
      expect(lastJson(a)).toMatchObject({ up: true });
      expect(lastJson(b)).toMatchObject({ up: true });
      // And every migration (Ordinal's and the service's) is recorded exactly once
      const rows = await db.query<{ name: string; n: number }>('SELECT name, count(*)::int AS n FROM ordinal_migrations GROUP BY name ORDER BY name');
      expect(rows.map((r) => r.name)).toContain('CreateOrderSummaries1767225600000');
      expect(rows.filter((r) => r.n !== 1)).toEqual([]);
      const [table] = await db.query<{ exists: boolean }>("SELECT to_regclass('order_summaries') IS NOT NULL AS exists");
      expect(table.exists).toBe(true);
    } finally {
      await db.drop();
    }
  }, 60_000);
});
