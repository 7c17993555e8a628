import { execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/test-database.js';
import { pollUntil, startReplica, type Replica } from './replica-process.js';
import { spawnScript } from '../support/server-process.js';
import {
  commandsOf,
  guideFiles,
  guideShellBlocks,
  guideTsconfig,
  writeFiles,
} from './sample-service.js';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GUIDE = join(root, 'docs', 'getting-started.md');
/** Guides whose `// src/…` blocks join the sample service (compiled; getting-started's are also run). */
const GUIDES = [
  GUIDE,
  join(root, 'docs', 'projections.md'),
  join(root, 'docs', 'subscriptions.md'),
];
/** Where the guide's shell blocks say the clone of Ordinal is. */
const CLONE_PLACEHOLDER = '/path/to/ordinal';

/** The environment of child processes: none of the npm_* variables `npm test` sets (they would point npm at this repository). */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)),
  );
  delete env.NODE_OPTIONS; // jest's --experimental-vm-modules is not the sample's business
  return { ...env, ...extra };
}

/**
 * npm's settings for the guide's `npm install` lines, given as configuration so the lines run
 * as written: the npm cache first (the registry for what it lacks), no audit or funding noise.
 */
const NPM_CONFIG = {
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_loglevel: 'error',
};

/** Runs one of the guide's shell blocks with bash, as written, in `cwd`; rejects with its output when a command fails. */
async function runBlock(block: string, cwd: string, env: Record<string, string> = {}) {
  try {
    return await run('bash', ['-euo', 'pipefail', '-c', block], {
      cwd,
      env: childEnv({ ...NPM_CONFIG, ...env }),
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `The guide's block failed in ${cwd}:\n${block}\n${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
      { cause: error },
    );
  }
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
    const child = spawn(process.execPath, args, {
      cwd,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`node ${args.join(' ')} exited ${code}:\n${out}\n${err}`)),
    );
  });
}

const lastJson = (out: string): Record<string, unknown> =>
  JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;

/**
 * The guide followed as a new user would: in an empty folder, the tarballs `npm run pack` made
 * where the guide says the clone is, a service folder with the guide's files and tsconfig as
 * written, and the guide's shell blocks run as written. The same files compiled as CommonJS in
 * a sibling folder that shares the installed node_modules.
 */
describe('installing @ordinal/nestjs from the tarballs into a service outside the repository', () => {
  let base: string;
  /** The ESM service, where the guide's commands run. */
  let dir: string;
  /** The same service as CommonJS. */
  let cjs: string;
  let blocks: { clone: string; install: string[]; build: string };
  const variants = [
    { name: 'ESM', folder: () => dir },
    { name: 'CommonJS', folder: () => cjs },
  ];

  beforeAll(async () => {
    // Given the guide's shell blocks: the first runs in the clone, the others in the service
    const [clone, ...service] = guideShellBlocks(GUIDE);
    const install = service.filter((block) => /^npm install /m.test(block));
    const rest = service.filter((block) => !install.includes(block));
    if (rest.length !== 1 || !/^npx tsc$/m.test(rest[0]) || !/^node --test /m.test(rest[0]))
      throw new Error(
        `getting-started.md's shell blocks besides the installs should be one: npx tsc, then node --test; got ${JSON.stringify(rest)}`,
      );
    blocks = { clone, install, build: rest[0] };
    // And the clone's block run here: `npm ci` made the checkout this test runs in, `npm run pack` runs as written
    const [cloneCommand] = commandsOf(clone);
    if (cloneCommand !== 'npm ci && npm run pack')
      throw new Error(`getting-started.md's first block is not "npm ci && npm run pack": ${clone}`);
    await run('npm', ['run', 'pack'], { cwd: root, env: childEnv(), maxBuffer: 16 * 1024 * 1024 });
    // And an empty folder: the tarballs where the guide has them (<clone>/dist/packages), and the service
    base = mkdtempSync(join(tmpdir(), 'ordinal-install-'));
    const packages = join(base, 'ordinal', 'dist', 'packages');
    mkdirSync(packages, { recursive: true });
    for (const name of readdirSync(join(root, 'dist', 'packages')))
      copyFileSync(join(root, 'dist', 'packages', name), join(packages, name));
    dir = join(base, 'shop');
    cjs = join(base, 'shop-cjs');
    for (const [folder, type] of [
      [dir, 'module'],
      [cjs, 'commonjs'],
    ] as const) {
      mkdirSync(folder);
      writeFileSync(
        join(folder, 'package.json'),
        JSON.stringify({ name: basename(folder), private: true, type }),
      );
      writeFiles(folder, guideFiles(...GUIDES));
      for (const driver of ['check.ts', 'replica.ts'])
        copyFileSync(
          join(root, 'test', 'install', 'fixtures', driver),
          join(folder, 'src', driver),
        );
      writeFileSync(join(folder, 'tsconfig.json'), guideTsconfig(GUIDE));
    }
    // When the guide's install commands run in the service, as written
    for (const block of install)
      await runBlock(block.replaceAll(CLONE_PLACEHOLDER, join(base, 'ordinal')), dir);
    // (the CommonJS service uses the same installation)
    symlinkSync(join(dir, 'node_modules'), join(cjs, 'node_modules'), 'dir');
  }, 300_000);

  afterAll(() => {
    // ORDINAL_KEEP_INSTALL=1 keeps the folder to inspect (its path is printed).
    if (base && process.env.ORDINAL_KEEP_INSTALL) console.log(`install test folder kept: ${base}`);
    else if (base) rmSync(base, { recursive: true, force: true });
  });

  it('installs real folders (no symlinks) and one copy of each Nest package', () => {
    const modules = join(dir, 'node_modules');
    const entries = [...walk(modules)].map((path) => relative(modules, path));
    expect(
      entries.filter(
        (path) => !path.startsWith('.bin') && lstatSync(join(modules, path)).isSymbolicLink(),
      ),
    ).toEqual([]);
    // A package's own folder is node_modules/@nestjs/<name>, at the top or nested in another's node_modules
    const names = entries.flatMap(
      (path) => /(?:^|\/node_modules\/)(@nestjs\/[^/]+)\/package\.json$/.exec(path)?.[1] ?? [],
    );
    expect(names.sort()).toEqual([...new Set(names)].sort());
    expect(names).toEqual(
      expect.arrayContaining(['@nestjs/common', '@nestjs/core', '@nestjs/cqrs', '@nestjs/typeorm']),
    );
    const ordinal = readdirSync(join(modules, '@ordinal')).sort();
    expect(ordinal).toEqual([
      'client',
      'contract',
      'event-sourcing',
      'log',
      'nestjs',
      'ownership',
      'pg',
      'projections',
      'subscriptions',
    ]);
    // And the client depends on the wire contract only (no Nest), which depends on nothing
    const manifest = (name: string) =>
      JSON.parse(readFileSync(join(modules, '@ordinal', name, 'package.json'), 'utf8')) as Record<
        string,
        unknown
      >;
    const client = manifest('client');
    expect([client.dependencies, client.peerDependencies]).toEqual([
      { '@ordinal/contract': '0.1.0' },
      undefined,
    ]);
    const contract = manifest('contract');
    expect([contract.dependencies ?? {}, contract.peerDependencies ?? {}]).toEqual([{}, {}]);
    // And the packages hold their built dist/ only (no sources, no specs)
    const shipped = [...walk(join(modules, '@ordinal'))].map((path) =>
      relative(join(modules, '@ordinal'), path),
    );
    expect(shipped.filter((path) => /\.ts$/.test(path) && !/\.d\.ts$/.test(path))).toEqual([]);
    expect(shipped.filter((path) => /\.(spec|int-spec|e2e-spec)\.(js|d\.ts)$/.test(path))).toEqual(
      [],
    );
  });

  it("runs the guide's build block as written in the service (npx tsc, then the kit's specs under node --test)", async () => {
    // When the guide's `npx tsc` and `node --test dist/orders/*.spec.js` run in the ESM service
    const { stdout } = await runBlock(blocks.build, dir, { DATABASE_URL: serverUrl() });
    // Then the guide's files (and the driver beside them) compiled with the guide's tsconfig
    expect(readdirSync(join(dir, 'dist'))).toEqual(
      expect.arrayContaining([
        'app.module.js',
        'main.js',
        'check.js',
        'replica.js',
        'orders',
        'shipping',
        'audit',
      ]),
    );
    // And the kit's two specs passed
    expect(stdout).toMatch(/# pass 4/);
    expect(stdout).toMatch(/# fail 0/);
  }, 420_000);

  it("compiles the guide's files and the driver with the guide's tsconfig as CommonJS", async () => {
    await run(
      process.execPath,
      [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(cjs, 'tsconfig.json')],
      { cwd: cjs, env: childEnv() },
    );
    expect(readdirSync(join(cjs, 'dist'))).toEqual(
      expect.arrayContaining(['app.module.js', 'check.js', 'replica.js', 'orders', 'shipping']),
    );
  }, 300_000);

  it("serves the guide's main.ts over HTTP: a command through the controller, the read model read back once the projection applied it", async () => {
    const db = await createTestDatabase('ordinal_install');
    // Given the guide's main.js started as the guide has it (PORT 0: the system picks the port it prints)
    const app = spawnScript(join(dir, 'dist', 'main.js'), { DATABASE_URL: db.url, PORT: '0' });
    try {
      const url = /Listening on (\S+)/.exec(
        await app.waitForOutput(/Listening on \S+/, 60_000),
      )![1];
      // When an order is placed through the controller
      const placed = await fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ orderId: 'order-http', customer: 'carol', total: 12 }),
      });
      expect([placed.status, await placed.json()]).toEqual([
        201,
        { orderId: 'order-http', version: 1 },
      ]);
      // Then the controller reads the projection's row once the projection applied the event
      const row = await pollUntil(
        async () => {
          const answer = await fetch(`${url}/orders/order-http`);
          return answer.status === 200 ? ((await answer.json()) as unknown) : null;
        },
        20_000,
        'the read model to have order-http',
      );
      expect(row).toEqual({
        orderId: 'order-http',
        customer: 'carol',
        total: 12,
        status: 'placed',
      });
      // And an order the read model does not have is a 404
      expect((await fetch(`${url}/orders/order-none`)).status).toBe(404);
    } finally {
      await app.stop();
      await db.drop();
    }
  }, 90_000);

  describe.each(variants)('the sample service as $name', ({ folder }) => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase('ordinal_install');
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('saves, loads, refuses a conflicting save, ships, and the projection row is there after waitFor', async () => {
      const result = lastJson(await node(folder(), ['dist/check.js'], { DATABASE_URL: db.url }));
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
        shipping: {
          shippedVersion: 2,
          statuses: [
            ['order-1', 'alice', 'shipped'],
            ['order-2', 'bob', 'shipped'],
          ],
        },
        // subscriptions.md's audit trail, started last: every message of the log, from the first, once
        audit: {
          placedVersion: 1,
          head: 5,
          trail: [
            [1, 'OrderPlaced', 'order-1'],
            [2, 'OrderShipped', 'order-1'],
            [3, 'OrderPlaced', 'order-2'],
            [4, 'OrderShipped', 'order-2'],
            [5, 'OrderPlaced', 'order-3'],
          ],
        },
      });
      // And its migration was recorded once, with Ordinal's
      const migrations = await db.query<{ name: string }>(
        'SELECT name FROM ordinal_migrations ORDER BY id',
      );
      expect(migrations.map((m) => m.name)).toEqual(
        expect.arrayContaining([
          'CreateOrderSummaries1767225600000',
          'CreateOrderStatuses1767312000000',
          'CreateAuditTrail1767398400000',
        ]),
      );
    }, 60_000);

    it("passes the guide's testing-kit specs under node:test", async () => {
      const specs = [...walk(join(folder(), 'dist'))]
        .filter((path) => path.endsWith('.spec.js'))
        .map((path) => relative(folder(), path));
      expect(specs).toHaveLength(2);
      const out = await node(folder(), ['--test', ...specs], {
        DATABASE_URL: serverUrl(),
      });
      expect(out).toMatch(/# pass 4/);
      expect(out).toMatch(/# fail 0/);
    }, 60_000);
  });

  it('starts two instances at the same moment on one database: both come up, each migration applied once', async () => {
    const db = await createTestDatabase('ordinal_install', { blank: true });
    try {
      // When two processes start the sample service at once on a fresh database
      const [a, b] = await Promise.all([
        node(dir, ['dist/check.js', 'start'], { DATABASE_URL: db.url }),
        node(cjs, ['dist/check.js', 'start'], { DATABASE_URL: db.url }),
      ]);
      // Then both come up
      expect(lastJson(a)).toMatchObject({ up: true });
      expect(lastJson(b)).toMatchObject({ up: true });
      // And every migration (Ordinal's and the service's) is recorded exactly once
      const rows = await db.query<{ name: string; n: number }>(
        'SELECT name, count(*)::int AS n FROM ordinal_migrations GROUP BY name ORDER BY name',
      );
      expect(rows.map((r) => r.name)).toContain('CreateOrderSummaries1767225600000');
      expect(rows.filter((r) => r.n !== 1)).toEqual([]);
      const [table] = await db.query<{ exists: boolean }>(
        "SELECT to_regclass('order_summaries') IS NOT NULL AS exists",
      );
      expect(table.exists).toBe(true);
    } finally {
      await db.drop();
    }
  }, 60_000);

  describe('two replicas of the installed service on one database (what docs/scaling.md promises)', () => {
    /** The takeover bound, set through the documented option (`OrdinalModule.forRoot({ log: { takeoverMs } })`). */
    const TAKEOVER_MS = 3000;
    const PROJECTIONS = ['order-statuses', 'order-summaries'];
    let db: TestDatabase;
    let env: NodeJS.ProcessEnv;
    /** Every replica started, the killed one included (its mails still count). */
    const replicas: Replica[] = [];
    let alive: Replica[] = [];
    // The read model a single process replaying what the test wrote would have
    const summaries = new Map<string, { customer: string; total: number; status: string }>();

    beforeAll(async () => {
      db = await createTestDatabase('ordinal_install');
      // Given two replicas of the service, the ESM and the CommonJS build, started at once
      env = childEnv({ DATABASE_URL: db.url, ORDINAL_TAKEOVER_MS: String(TAKEOVER_MS) });
      replicas.push(...(await Promise.all([startReplica(dir, env), startReplica(cjs, env)])));
      alive = [...replicas];
    }, 120_000);
    afterAll(async () => {
      // Stdin's end closes a replica's application; one that does not exit in time is killed
      for (const replica of alive) replica.child.stdin!.end();
      const timer = setTimeout(() => replicas.forEach((r) => r.child.kill('SIGKILL')), 10_000);
      await Promise.all(replicas.map((r) => r.exited));
      clearTimeout(timer);
      await db?.drop();
    }, 30_000);

    const place = async (via: Replica, orderId: string, customer: string, total: number) => {
      expect(await via.call('place', { orderId, customer, total })).toBe(1);
      summaries.set(orderId, { customer, total, status: 'placed' });
    };
    const ship = async (via: Replica, orderId: string) => {
      await via.call('ship', { orderId });
      summaries.get(orderId)!.status = 'shipped';
    };
    const expectedRows = () => {
      const ids = [...summaries.keys()].sort();
      return {
        summaries: ids.map((id) => [
          id,
          summaries.get(id)!.customer,
          summaries.get(id)!.total,
          summaries.get(id)!.status,
        ]),
        statuses: ids.map((id) => [id, summaries.get(id)!.customer, summaries.get(id)!.status]),
      };
    };
    /** Waits, in every live replica, until both projections applied the head; the owner answers last (its mails precede its answer on its stdout). */
    const caughtUp = async (owner: Replica) => {
      const head = (await owner.call('head')) as number;
      for (const replica of [...alive.filter((r) => r !== owner), owner])
        await replica.call('waitFor', { index: head });
      return head;
    };
    const leases = () =>
      db.query<{ name: string; owner: string | null; live: boolean; acquiredMs: number }>(
        `SELECT name, owner, expires_at > clock_timestamp() AS live,
                extract(epoch FROM acquired_at)::float8 * 1000 AS "acquiredMs"
           FROM consumer_leases WHERE name = ANY($1) ORDER BY name`,
        [PROJECTIONS],
      );
    /** The database's clock (ms): leases are stamped by it, so a takeover is measured on it. */
    const dbNow = async () =>
      (
        await db.query<{ ms: number }>(
          'SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms',
        )
      )[0].ms;
    /**
     * How long after `since` (database clock) each lease `from` held was claimed by another
     * process: the takeover the bound is about, without the test's polling or its requests.
     */
    const claimedAfter = async (since: number, from: number) => {
      const rows = await leases();
      return rows
        .filter((l) => l.owner && pidOf(l.owner) !== from)
        .map((l) => l.acquiredMs - since);
    };
    const pidOf = (owner: string) => Number(owner.split(':')[1]);
    /** The replica holding each projection's live lease, once both have one. */
    const owners = async () =>
      pollUntil(
        async () => {
          const rows = await leases();
          return rows.length === PROJECTIONS.length && rows.every((l) => l.owner && l.live)
            ? new Map(rows.map((l) => [l.name, replicas.find((r) => r.pid === pidOf(l.owner!))!]))
            : null;
        },
        30_000,
        'both projections to have an owner',
      );
    /** Mails sent per order, across every replica that ever ran. */
    const mailsPerOrder = () => {
      const counts = new Map<string, number>();
      for (const mail of replicas.flatMap((r) => r.mails)) {
        const orderId = /^to \S+: (\S+) is on its way$/.exec(mail)?.[1] ?? `unparsed: ${mail}`;
        counts.set(orderId, (counts.get(orderId) ?? 0) + 1);
      }
      return Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));
    };
    const shippedOnce = () =>
      Object.fromEntries(
        [...summaries]
          .filter(([, s]) => s.status === 'shipped')
          .map(([id]) => [id, 1])
          .sort(([a], [b]) => String(a).localeCompare(String(b))),
      );

    it('each projection is owned by exactly one replica; every event is applied once across both (read model as a single process has it, one mail per shipped order)', async () => {
      const [a, b] = replicas;
      const owned = await owners();
      // When orders are placed through one replica and shipped through the other, items added through either
      for (let n = 1; n <= 20; n++)
        await place(n % 2 ? a : b, `order-${String(n).padStart(2, '0')}`, `customer-${n}`, n * 10);
      for (let n = 1; n <= 20; n += 2)
        await ship(n % 4 === 1 ? b : a, `order-${String(n).padStart(2, '0')}`);
      for (const n of [2, 3, 4]) {
        const orderId = `order-${String(n).padStart(2, '0')}`;
        await (n % 2 ? a : b).call('addItem', { orderId, price: 5 });
        summaries.get(orderId)!.total += 5;
      }
      await caughtUp(owned.get('order-statuses')!);
      // Then both replicas' reports name the same single owner of each projection, one of the two, which says it is itself
      const reports = await Promise.all(
        replicas.map(
          (r) =>
            r.call('report') as Promise<
              {
                name: string;
                state: string;
                local: boolean;
                owner: { pid: number; self: boolean } | null;
              }[]
            >,
        ),
      );
      for (const name of PROJECTIONS) {
        const views = reports.map((report) => report.find((r) => r.name === name)!);
        expect(views.map((v) => [v.state, v.local, v.owner?.pid])).toEqual([
          ['running', true, owned.get(name)!.pid],
          ['running', true, owned.get(name)!.pid],
        ]);
        expect(views.map((v) => v.owner!.self)).toEqual(replicas.map((r) => r === owned.get(name)));
      }
      // And the read model, read through either replica, is what a single process replaying the log has
      for (const replica of replicas) expect(await replica.call('rows')).toEqual(expectedRows());
      // And the live side effect (outside the read model's transaction) ran once per shipped order, in the owner only
      expect(mailsPerOrder()).toEqual(shippedOnce());
      expect(replicas.filter((r) => r.mails.length > 0).map((r) => r.pid)).toEqual([
        owned.get('order-statuses')!.pid,
      ]);
    }, 120_000);

    it('an aggregate saved through both replicas at once: one save wins, the other gets VersionConflictError, and retryOnConflict then succeeds', async () => {
      const [a, b] = replicas;
      await place(a, 'order-race', 'race', 100);
      // Given both replicas loaded the order at version 1 and decided
      expect(
        await Promise.all([
          a.call('prepare', { orderId: 'order-race', price: 5 }),
          b.call('prepare', { orderId: 'order-race', price: 7 }),
        ]),
      ).toEqual([1, 1]);
      // When both save at the same moment
      const answers = await Promise.all([a.ask('save'), b.ask('save')]);
      // Then exactly one save succeeded, at version 2, and the other got the typed conflict
      const won = answers.filter((x) => x.ok);
      const lost = answers.flatMap((x) => (x.ok ? [] : [x.error]));
      expect(won.map((x) => x.ok && x.result)).toEqual([2]);
      expect(lost).toEqual([
        expect.objectContaining({
          name: 'VersionConflictError',
          code: 'version_conflict',
          streamId: 'order-race',
          current: 2,
          expected: 1,
        }),
      ]);
      // And the loser's retry through retryOnConflict (load, decide, save) succeeds on top of the winner's
      const loser = answers[0].ok ? b : a;
      expect(await loser.call('retry', { orderId: 'order-race', price: loser === a ? 5 : 7 })).toBe(
        3,
      );
      summaries.get('order-race')!.total += 12;
      await caughtUp((await owners()).get('order-summaries')!);
      for (const replica of replicas) expect(await replica.call('rows')).toEqual(expectedRows());
    }, 60_000);

    it('kill -9 of the owner: the other replica takes over within takeoverMs and continues from the checkpoint, nothing lost or repeated', async () => {
      // Given everything applied (the checkpoints at the head)
      const owned = await owners();
      const victim = owned.get('order-statuses')!;
      const survivor = replicas.find((r) => r !== victim)!;
      const head = await caughtUp(victim);
      const before = await db.query<{ name: string; position: string }>(
        'SELECT name, position FROM checkpoints WHERE name = ANY($1) ORDER BY name',
        [PROJECTIONS],
      );
      expect(before.map((c) => Number(c.position))).toEqual([head, head]);
      // When the owner is killed (the time read just before), and orders are placed and shipped through the survivor meanwhile
      const victimHeld = (await leases()).filter((l) => l.owner && pidOf(l.owner) === victim.pid);
      expect(victimHeld.length).toBeGreaterThan(0);
      const killedAt = await dbNow();
      victim.child.kill('SIGKILL');
      expect(await victim.exited).toBe('SIGKILL');
      alive = [survivor];
      for (let n = 21; n <= 25; n++) {
        await place(survivor, `order-${n}`, `customer-${n}`, n * 10);
        await ship(survivor, `order-${n}`);
      }
      // Then the survivor holds both projections within the bound
      await pollUntil(
        async () => {
          const rows = await leases();
          return (
            rows.length === PROJECTIONS.length &&
            rows.every((l) => l.owner && l.live && pidOf(l.owner) === survivor.pid)
          );
        },
        30_000,
        'the survivor to own both projections',
      );
      // (each lease the victim held, claimed within the bound of its death on the database's clock:
      // by design at most ttl + tick, then the claim; the requests above are not in it)
      const taken = (await leases()).filter((l) => victimHeld.some((v) => v.name === l.name));
      const takeovers = taken.map((l) => l.acquiredMs - killedAt);
      expect(takeovers).toHaveLength(victimHeld.length);
      expect(takeovers.filter((ms) => ms <= 0 || ms > TAKEOVER_MS)).toEqual([]);
      // And it applies what came after the checkpoint: every order is in the read model, and every shipped order mailed once (none again)
      await caughtUp(survivor);
      expect(await survivor.call('rows')).toEqual(expectedRows());
      expect(mailsPerOrder()).toEqual(shippedOnce());
      const report = (await survivor.call('report')) as {
        name: string;
        state: string;
        owner: { pid: number; self: boolean } | null;
      }[];
      expect(PROJECTIONS.map((name) => report.find((r) => r.name === name))).toEqual(
        PROJECTIONS.map((name) =>
          expect.objectContaining({
            name,
            state: 'running',
            owner: { pid: survivor.pid, self: true },
          }),
        ),
      );
    }, 90_000);

    it('SIGTERM of the owner (a rolling restart, shutdown hooks enabled as the guide says): it releases its leases on the way out, a new replica takes over, nothing is mailed twice', async () => {
      // Given a new replica started beside the owner, as a deploy does: it stands by
      const [owner] = alive;
      const newcomer = await startReplica(cjs, env);
      replicas.push(newcomer);
      alive.push(newcomer);
      await caughtUp(owner);
      expect([...(await owners()).values()].map((r) => r.pid)).toEqual([owner.pid, owner.pid]);
      // When orders arrive through the newcomer and the owner gets SIGTERM
      for (let n = 26; n <= 28; n++) {
        await place(newcomer, `order-${n}`, `customer-${n}`, n * 10);
        await ship(newcomer, `order-${n}`);
      }
      const stoppedAt = await dbNow();
      owner.child.kill('SIGTERM');
      expect([0, 'SIGTERM']).toContain(await owner.exited);
      alive = [newcomer];
      // Then it released its leases as it stopped (a killed process would still name itself on them)
      expect(
        (await leases()).filter((l) => l.owner && pidOf(l.owner) === owner.pid && l.live),
      ).toEqual([]);
      // And the newcomer owns both projections within the bound and applies everything, each shipped order mailed once
      await pollUntil(
        async () => {
          const rows = await leases();
          return (
            rows.length === PROJECTIONS.length &&
            rows.every((l) => l.owner && l.live && pidOf(l.owner) === newcomer.pid)
          );
        },
        30_000,
        'the newcomer to own both projections',
      );
      const handovers = await claimedAfter(stoppedAt, owner.pid);
      expect(handovers).toHaveLength(PROJECTIONS.length);
      expect(handovers.filter((ms) => ms <= 0 || ms > TAKEOVER_MS)).toEqual([]);
      await caughtUp(newcomer);
      expect(await newcomer.call('rows')).toEqual(expectedRows());
      expect(mailsPerOrder()).toEqual(shippedOnce());
    }, 90_000);

    it('a takeover bound below 500 ms stops the start with a typed error naming the option', async () => {
      // When a replica starts with log.takeoverMs 300
      const start = startReplica(dir, { ...env, ORDINAL_TAKEOVER_MS: '300' });
      // Then it exits, saying which option is wrong and how to set it (an OrdinalError, not a bare RangeError)
      await expect(start).rejects.toThrow(
        /exited with \S+ before it was up[\s\S]*OrdinalError: log\.takeoverMs must be a number of milliseconds of at least 500, got 300: set OrdinalModule\.forRoot\(\{ log: \{ takeoverMs \} \}\)/,
      );
    }, 60_000);

    it('a single-process replay (rebuild) of the log gives the same read model and sends no mail again', async () => {
      const [survivor] = alive;
      const rows = await survivor.call('rows');
      // When the one remaining process rebuilds both projections from the log
      await survivor.call('rebuild');
      await caughtUp(survivor);
      // Then the read model is the one both replicas kept, and replayed events (isReplay) mailed nobody
      expect(await survivor.call('rows')).toEqual(rows);
      expect(rows).toEqual(expectedRows());
      expect(mailsPerOrder()).toEqual(shippedOnce());
    }, 60_000);
  });
});
