import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';
import type { OpenApiDocument, Schema } from '../support/openapi-schemas.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const REDOCLY = join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');

/** Whether this machine lets the test cut the lint off the network (a network namespace of its own). */
function canUnshareNetwork(): boolean {
  try {
    execFileSync('unshare', ['-n', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Runs `redocly lint` with the repository's redocly.yaml; resolves with its JSON report. */
function redoclyLint(file: string): Promise<{
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}> {
  const args = [REDOCLY, 'lint', '--config', join(root, 'redocly.yaml'), '--format', 'json', file];
  // Offline: no telemetry, no update check; where possible without any network at all.
  const [command, argv] = canUnshareNetwork()
    ? ['unshare', ['-n', process.execPath, ...args]]
    : [process.execPath, args];
  return new Promise((resolve, reject) => {
    execFile(
      command,
      argv,
      {
        cwd: root,
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
        env: {
          PATH: process.env.PATH ?? '',
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
          REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
        },
      },
      (error, stdout, stderr) => {
        const start = stdout.indexOf('{');
        if (start < 0)
          return reject(new Error(`redocly printed no report: ${error?.message ?? ''}\n${stderr}`));
        resolve(JSON.parse(stdout.slice(start)));
      },
    );
  });
}

describe('the generated OpenAPI document passes third-party tools (Redocly, a strict JSON Schema validator)', () => {
  let db: TestDatabase;
  let server: TestServer;
  let document: OpenApiDocument & Record<string, unknown>;
  const dir = mkdtempSync(join(tmpdir(), 'ordinal-openapi-'));

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url);
    document = (await (await fetch(`${server.baseUrl}/api/docs-json`)).json()) as typeof document;
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Redocly lints it (recommended-strict and the tag rules of redocly.yaml) with no error and no warning, offline', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const report = await redoclyLint(file);
    expect(
      report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`),
    ).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('declares a server, the tags, and security on every operation (none for /health and /metrics)', () => {
    expect(document.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    const tags = (document.tags as { name: string; description: string }[]).map((t) => t.name);
    for (const item of Object.values(document.paths))
      for (const op of Object.values(item)) {
        expect(op.security).toBeDefined();
        for (const tag of (op as { tags?: string[] }).tags ?? []) expect(tags).toContain(tag);
      }
    expect(document.paths['/health'].get.security).toEqual([]);
    expect(document.paths['/metrics'].get.security).toEqual([]);
  });

  it('declares X-Correlation-Id and traceparent as header parameters of every operation', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths))
      for (const [method, op] of Object.entries(item)) {
        const headers = (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
        for (const name of ['X-Correlation-Id', 'traceparent'])
          if (!headers.includes(name)) missing.push(`${method} ${path}: ${name}`);
      }
    expect(missing).toEqual([]);
  });

  it("describes the stream's events in its text/event-stream response, each event's data a component schema", () => {
    const content = document.paths['/api/events/stream'].get.responses['200'].content!;
    const schema = content['text/event-stream'].schema as Schema;
    const events = (schema.oneOf as Schema[]).map((e) => [
      e.properties.event.enum[0],
      e.properties.data.$ref,
    ]);
    expect(events).toEqual([
      ['connected', '#/components/schemas/ConnectedEventDto'],
      ['message', '#/components/schemas/MessageEventDto'],
      ['tombstone', '#/components/schemas/TombstoneEventDto'],
      ['late-message', '#/components/schemas/MessageEventDto'],
      ['heartbeat', '#/components/schemas/HeartbeatEventDto'],
      ['stream-ended', '#/components/schemas/StreamEndedEventDto'],
    ]);
    for (const [, ref] of events)
      expect(document.components.schemas[ref.split('/').pop()!]).toBeDefined();
  });

  it('null answers validate against the schemas with a strict validator (Ajv in strict mode, OpenAPI 3.0 nullable)', async () => {
    // Given Ajv in strict mode reading the document's schemas as written (it knows OpenAPI's
    // `nullable`; `example` is only an annotation)
    const ajv = new Ajv({ strict: true, validateFormats: false });
    ajv.addKeyword('example');
    // (the document's schemas stay where their $refs point: `#/components/schemas/…`)
    ajv.addKeyword('components');
    ajv.addSchema({ $id: 'doc', components: document.components });
    const validator = (name: string) => ajv.getSchema(`doc#/components/schemas/${name}`)!;
    // When a stream without a snapshot is read (a real answer with a null)
    const snapshot = await http(server.baseUrl, 'GET', '/api/streams/nobody-1/snapshot');
    expect(snapshot.status).toBe(200);
    expect(snapshot.body).toMatchObject({ snapshot: null });
    // Then it validates, and so do the other answers whose object may be null
    const cases: [string, unknown][] = [
      ['SnapshotReadDto', snapshot.body],
      [
        'InterfaceReportDto',
        {
          name: 'billing',
          type: 'replayable',
          state: 'unowned',
          bookmark: null,
          position: 0,
          owner: null,
          local: false,
        },
      ],
      [
        'DeadLetterDto',
        {
          messageType: null,
          userId: null,
          headers: {},
          body: '{}',
          death: null,
        },
      ],
    ];
    for (const [name, body] of cases) {
      const validate = validator(name);
      expect([name, validate(body) ? null : validate.errors]).toEqual([name, null]);
    }
    // And a wrong answer still fails (the null alternative admits null only)
    expect(validator('SnapshotReadDto')({ streamId: 'x', snapshot: 'nope' })).toBe(false);
  });
});
