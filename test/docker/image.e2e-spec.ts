import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { loadInterfacesFile } from '@ordinal/amqp';
import { loadConfig } from '../../apps/eventstore/src/config/ordinal-config.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http } from '../support/test-server.js';
import { spawn } from 'node:child_process';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
/** A production token secret, as long as `ordinal token` makes them. */
const IMAGE_SECRET = 'image-test-secret-0123456789abcdefghijklmnopq';

/** What the compose specs read of a service. */
interface ComposeService {
  healthcheck?: { test?: unknown };
  volumes?: string[];
  ports?: string[];
  networks?: string[];
}

/** One Dockerfile instruction, continuation lines joined. */
interface Instruction {
  op: string;
  args: string;
  stage: number;
}

function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n\s*/g, ' ');
  const out: Instruction[] = [];
  let stage = -1;
  for (const line of joined.split('\n').map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    const [op, ...rest] = line.split(/\s+/);
    if (op.toUpperCase() === 'FROM') stage++;
    out.push({ op: op.toUpperCase(), args: rest.join(' '), stage });
  }
  return out;
}

/** `COPY [--from=x] [--chown=…] src… dest` → its parts. */
function copyOf(args: string): { from: string | null; sources: string[]; dest: string } {
  const parts = args.split(/\s+/);
  const from = parts.find((p) => p.startsWith('--from='))?.slice(7) ?? null;
  const paths = parts.filter((p) => !p.startsWith('--'));
  return { from, sources: paths.slice(0, -1), dest: paths[paths.length - 1] };
}

const dockerfile = instructions(read('docker/Dockerfile'));
const stages = Math.max(...dockerfile.map((i) => i.stage)) + 1;
const inStage = (stage: number, op: string) =>
  dockerfile.filter((i) => i.stage === stage && i.op === op);
const FINAL = stages - 1;

describe('the Docker image and compose files (no Docker engine here: their content and their build steps)', () => {
  it('is multi-stage on a supported Node LTS, runs as non-root with a HEALTHCHECK, and ships no tests or benchmarks', () => {
    expect(stages).toBeGreaterThanOrEqual(2);
    const base = /ARG NODE_IMAGE=(\S+)/.exec(read('docker/Dockerfile'))![1];
    expect(base).toMatch(/^node:(22|24)(\.\d+)*-/);
    expect(read('docker/Dockerfile')).not.toMatch(/node:(1\d|20|21|23)\b/);
    for (const from of dockerfile.filter((i) => i.op === 'FROM'))
      expect(from.args).toMatch(/^\$\{NODE_IMAGE\}/);
    expect(inStage(FINAL, 'USER').map((i) => i.args)).toEqual(['node']);
    expect(inStage(FINAL, 'HEALTHCHECK')).toHaveLength(1);
    expect(inStage(FINAL, 'CMD')[0].args).toMatch(/^\["node",/);
    // Nothing from test/ or the benchmarks is copied, and the final stage gets only built output and production dependencies
    for (const copy of dockerfile.filter((i) => i.op === 'COPY'))
      expect(copy.args).not.toMatch(/\btest\b|bench/);
    for (const copy of inStage(FINAL, 'COPY').map((i) => copyOf(i.args))) {
      expect(copy.from).not.toBeNull();
      for (const source of copy.sources)
        expect(source === '/app' || source.endsWith('/dist')).toBe(true);
    }
    // The build compiles the server only (not the samples or benchmarks)
    expect(
      dockerfile.filter((i) => i.op === 'RUN' && /\btsc -b\b/.test(i.args)).map((i) => i.args),
    ).toEqual(['node node_modules/typescript/bin/tsc -b apps/eventstore']);
  });

  it('copies only paths that exist and that .dockerignore lets through; .dockerignore keeps out secrets, local data and tests', () => {
    const ignore = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(ignore).toEqual(
      expect.arrayContaining([
        '.git',
        '**/node_modules',
        '**/dist',
        'test',
        '.ordinal',
        '.env',
        'bench-results',
      ]),
    );
    for (const copy of dockerfile
      .filter((i) => i.op === 'COPY')
      .map((i) => copyOf(i.args))
      .filter((c) => c.from === null)) {
      for (const source of copy.sources) {
        expect(existsSync(join(root, source))).toBe(true);
        expect(ignore).not.toContain(source.split('/')[0]);
      }
    }
  });

  it('compose: healthchecks on every service, named volumes, an env-supplied token in production, never the development token, no published port, interfaces opt-in', () => {
    const dev = parse(read('docker/compose.yml'));
    const deploy = parse(read('docker/compose.deploy.yml'));
    for (const file of [dev, deploy]) {
      for (const [name, service] of Object.entries<ComposeService>(file.services)) {
        expect([name, Boolean(service.healthcheck?.test)]).toEqual([name, true]);
        for (const volume of service.volumes ?? []) {
          const source = volume.split(':')[0];
          if (!source.startsWith('.')) expect(Object.keys(file.volumes)).toContain(source);
        }
      }
    }
    expect(deploy.services.postgres.volumes).toEqual(['postgres-data:/var/lib/postgresql/data']);
    expect(deploy.services.rabbitmq.volumes).toEqual(['rabbitmq-data:/var/lib/rabbitmq']);
    for (const text of [
      read('docker/compose.yml'),
      read('docker/compose.deploy.yml'),
      read('docker/Dockerfile'),
    ])
      expect(text).not.toContain('dev-ordinal-token');
    const ordinal = deploy.services.ordinal;
    expect(ordinal.environment.ORDINAL_ENV).toBe('production');
    expect(ordinal.environment.ORDINAL_TOKENS).toMatch(/^\$\{ORDINAL_TOKENS:\?/);
    // The database password never goes raw into a URL (base64 has '/', '+'): PGPASSWORD carries it
    expect(ordinal.environment.DATABASE_URL).not.toContain('POSTGRES_PASSWORD');
    expect(ordinal.environment.PGPASSWORD).toBe('${POSTGRES_PASSWORD}');
    // A container listens on every interface, said where it runs (development defaults to 127.0.0.1)
    expect(ordinal.environment.HOST).toBe('0.0.0.0');
    expect(read('docker/Dockerfile')).toMatch(/^ENV .*\bHOST=0\.0\.0\.0\b/m);
    // No service publishes a port in the deployment (plain HTTP, /metrics and /api/docs without a
    // token): Ordinal is reached on the proxy network only, the databases on an internal one
    expect(
      Object.entries<ComposeService>(deploy.services)
        .filter(([, s]) => s.ports)
        .map(([n]) => n),
    ).toEqual([]);
    expect(ordinal.networks).toEqual(['backend', 'proxy']);
    expect(deploy.services.postgres.networks).toEqual(['backend']);
    expect(deploy.services.rabbitmq.networks).toEqual(['backend']);
    expect(deploy.networks.backend).toEqual({ internal: true });
    expect(deploy.networks.proxy).toMatchObject({ external: true });
    for (const service of Object.values<ComposeService>(dev.services))
      for (const port of service.ports!) expect(port).toMatch(/^127\.0\.0\.1:/);
    // Push interfaces are opt-in: the deploy file has none; the interfaces file mounts one and
    // names it in ORDINAL_INTERFACES, and the example loads
    expect(ordinal.environment.ORDINAL_INTERFACES).toBeUndefined();
    expect(ordinal.volumes).toBeUndefined();
    const interfaces = parse(read('docker/compose.interfaces.yml')).services.ordinal;
    const [mount] = interfaces.volumes as string[];
    const [, hostPath, containerPath] = /^(.*):(\/[^:]+):ro$/.exec(mount)!;
    expect(containerPath).toBe(interfaces.environment.ORDINAL_INTERFACES);
    expect(hostPath).toBe('${ORDINAL_INTERFACES_FILE:-./interfaces.example.yaml}');
    expect(
      loadInterfacesFile(join(root, 'docker', 'interfaces.example.yaml')).map((i) => i.name),
    ).toEqual(['billing', 'notifications']);
  });

  it("deployment.md's first commands make ORDINAL_TOKENS a production server accepts, with only a shell and openssl (no npm ci, no build)", async () => {
    // Given the guide's first shell block up to its docker commands
    const block = /```bash\n(token\(\)[\s\S]*?)```/.exec(read('docs/deployment.md'))![1];
    const lines = block.split('\n').filter((line) => line && !line.startsWith('docker '));
    // When they run in a bare shell (PATH only: no node_modules, no repository build)
    const { stdout } = await run(
      'bash',
      ['-euo', 'pipefail', '-c', `${lines.join('\n')}\nprintf %s "$ORDINAL_TOKENS"`],
      {
        cwd: tmpdir(),
        env: { PATH: '/usr/bin:/bin' },
      },
    );
    // Then they are two entries of 43-character secrets, which production accepts
    const config = loadConfig({
      ORDINAL_ENV: 'production',
      DATABASE_URL: 'postgres://db/ordinal',
      ORDINAL_TOKENS: stdout,
    });
    expect(config.tokens.map((t) => [t.name, [...t.scopes].join('+'), t.secret.length])).toEqual([
      ['ingest', 'write', 43],
      ['ops', 'read+write+admin', 43],
    ]);
  });

  describe('the build steps, run as the Dockerfile runs them, in a temporary folder', () => {
    let db: TestDatabase;
    let dir: string;
    beforeAll(async () => {
      db = await createTestDatabase();
      dir = mkdtempSync(join(tmpdir(), 'ordinal-image-'));
    });
    afterAll(async () => {
      await db?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('installs production dependencies only, takes the built output, and starts in production mode from it', async () => {
      // Given the build stage's compile (npm test built the repository: this is its no-op check)
      await run(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'apps/eventstore'], {
        cwd: root,
      });
      // And the dependency stage: its manifests copied, then its RUN as written (npm's cache first)
      const depsStage = dockerfile.find((i) => i.op === 'RUN' && /--omit=dev/.test(i.args))!;
      for (const copy of inStage(depsStage.stage, 'COPY').map((i) => copyOf(i.args))) {
        for (const source of copy.sources) {
          const rel = source.replace(/^\/app\//, '');
          const target = copy.dest.endsWith('/')
            ? join(dir, copy.dest, rel.split('/').pop()!)
            : join(dir, rel);
          mkdirSync(dirname(target), { recursive: true });
          cpSync(join(root, rel), target);
        }
      }
      // (BuildKit's cache mount flag is the builder's, not the command's.)
      const command = depsStage.args.replace(/^(--mount=\S+\s+)+/, '');
      expect(command).not.toMatch(/npm cache/);
      await run('sh', ['-c', command], {
        cwd: dir,
        env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_loglevel: 'error' },
        maxBuffer: 16 * 1024 * 1024,
      });
      // And the final stage's built output
      for (const copy of inStage(FINAL, 'COPY')
        .map((i) => copyOf(i.args))
        .filter((c) => c.sources[0] !== '/app')) {
        const rel = copy.sources[0].replace(/^\/app\//, '');
        cpSync(join(root, rel), join(dir, copy.dest), { recursive: true });
      }
      // Then no development dependency, test or benchmark is there
      for (const absent of [
        'jest',
        'ts-jest',
        'playwright-core',
        'testcontainers',
        'fast-check',
        '@electric-sql',
        '@event-driven-io',
        // @nestjs/swagger's optional peer: the lockfile marks it devOptional, which --omit=dev keeps
        'typescript',
      ])
        expect([absent, existsSync(join(dir, 'node_modules', absent))]).toEqual([absent, false]);
      expect(existsSync(join(dir, 'test'))).toBe(false);
      // When the image's command starts it in production mode
      const cmd = JSON.parse(inStage(FINAL, 'CMD')[0].args) as string[];
      const env = {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        ORDINAL_ENV: 'production',
        // 0: the system picks a free port, and the server says which one it bound
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: db.url,
        ORDINAL_TOKENS: `ops:${IMAGE_SECRET}:read+write+admin`,
      };
      const child = spawn(process.execPath, cmd.slice(1), {
        cwd: dir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const exited = new Promise<number | string | null>((resolve) =>
        child.once('exit', (code, signal) => resolve(code ?? signal)),
      );
      try {
        const deadline = Date.now() + 30_000;
        while (!/listening on/.test(output)) {
          if (Date.now() > deadline || child.exitCode !== null)
            throw new Error(`The server did not start:\n${output}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const port = /listening on http:\/\/localhost:(\d+)/.exec(output)![1];
        // Then the HEALTHCHECK passes, its token works and the development token does not
        const healthcheck = JSON.parse(
          /HEALTHCHECK .*CMD (\[.*\])$/.exec(
            inStage(FINAL, 'HEALTHCHECK')[0].args.replace(/^/, 'HEALTHCHECK '),
          )![1],
        ) as string[];
        await run(process.execPath, healthcheck.slice(1), { env: { ...env, PORT: port } });
        const base = `http://127.0.0.1:${port}`;
        expect(
          (
            await http(
              base,
              'PUT',
              '/api/events/message',
              { messageType: 'FromImage', content: { ok: true } },
              { authorization: `Bearer ${IMAGE_SECRET}` },
            )
          ).status,
        ).toBe(201);
        expect((await http(base, 'GET', '/api/events/head')).status).toBe(401);
        expect(output).toMatch(/"level":"log"/);
      } finally {
        child.kill('SIGTERM');
        const started = Date.now();
        expect([0, 'SIGTERM']).toContain(await exited);
        expect(Date.now() - started).toBeLessThan(10_000);
      }
    });
  });
});
