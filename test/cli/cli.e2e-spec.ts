import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { parseTokens } from '../../apps/eventstore/src/auth/api-token.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import {
  brokerUrl,
  connectTestBroker,
  uniqueName,
  type TestBroker,
} from '../support/amqp-broker.js';
import { runCli, spawnCli } from '../support/cli-process.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';

describe('the ordinal command, as a process against a real server', () => {
  let db: TestDatabase;
  let server: TestServer;
  let broker: TestBroker;
  let env: Record<string, string>;
  const input = uniqueName('cli-input');
  const billing = uniqueName('cli-billing');
  const audited: number[] = [];
  const dirs: string[] = [];
  const tempDir = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    const dir = tempDir('ordinal-cli-');
    writeFileSync(
      join(dir, 'interfaces.yaml'),
      `interfaces:\n  - name: ${billing}\n    type: replayable\n`,
    );
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'reader:reader-secret:read',
      AMQP_URL: brokerUrl(),
      ORDINAL_AMQP_INPUT_QUEUE: input,
      ORDINAL_INTERFACES: join(dir, 'interfaces.yaml'),
    });
    server.app
      .get(SubscriptionsService)
      .subscribe({ name: 'audit', stream: '$all', handle: (m) => void audited.push(m.id) });
    env = { ORDINAL_URL: server.baseUrl, ORDINAL_TOKEN: 'dev-ordinal-token' };
  });
  afterAll(async () => {
    await server?.close();
    await broker?.deleteQueues(input, `${input}.rejected`, `${billing}.sink`, `${billing}.ack`);
    await broker?.close();
    await db?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const head = async () =>
    (await http(server.baseUrl, 'GET', '/api/events/head')).body.head as number;

  it('prints help for every command (exit 0), the overview, and refuses unknown commands and flags (exit 2)', async () => {
    const [overview, unknown, flag, ...results] = await Promise.all([
      runCli(['--help']),
      runCli(['frobnicate']),
      runCli(['status', '--bogus'], env),
      ...COMMANDS.map((c) => runCli([...c.name.split(' '), '--help'])),
    ]);
    results.forEach((r, i) => {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: ordinal ${COMMANDS[i].usage}`);
    });
    expect(overview.code).toBe(0);
    for (const c of COMMANDS) expect(overview.stdout).toContain(`ordinal ${c.name}`);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown command: frobnicate');
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/Unknown option '--bogus'[\s\S]*Usage: ordinal status/);
  });

  it('publish prints the stored index; --key repeats return it again; bad JSON is a usage error', async () => {
    // When a message is published
    const first = await runCli(
      ['publish', 'CliOrder', '{"orderId":"o-1"}', '--user', 'customer-1', '--key', 'cli-o-1'],
      env,
    );
    // Then stdout is its index, and it is stored as sent
    expect(first.code).toBe(0);
    const id = Number(first.stdout.trim());
    expect(id).toBe(await head());
    const stored = await http(server.baseUrl, 'GET', `/api/events/${id}`);
    expect(stored.body).toMatchObject({
      messageType: 'CliOrder',
      userId: 'customer-1',
      body: { orderId: 'o-1' },
    });
    // And a repeat of the same request with the key answers the same index
    const repeat = await runCli(
      [
        'publish',
        'CliOrder',
        '{"orderId":"o-1"}',
        '--user',
        'customer-1',
        '--key',
        'cli-o-1',
        '--json',
      ],
      env,
    );
    expect(repeat.code).toBe(0);
    expect(JSON.parse(repeat.stdout).id).toBe(id);
    expect(repeat.stderr).toContain('Already stored');
    // While the key with another request is refused (422 idempotency_key_reused), exit code 1
    const reused = await runCli(
      ['publish', 'CliOrder', '{"orderId":"o-2"}', '--user', 'customer-1', '--key', 'cli-o-1'],
      env,
    );
    expect(reused.code).toBe(1);
    expect(reused.stderr).toMatch(/idempotency/i);
    const bad = await runCli(['publish', 'CliOrder', '{nope'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('The body is not valid JSON');
    const invalid = await runCli(['publish', 'bad type!', '{}'], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/The server answered 400: .*messageType/);
  });

  it('publish --file imports an NDJSON file in batches with a progress bar on stderr', async () => {
    // Given a file of 2,500 messages
    const dir = tempDir('ordinal-cli-import-');
    const file = join(dir, 'events.ndjson');
    writeFileSync(
      file,
      Array.from({ length: 2500 }, (_, i) =>
        JSON.stringify({ messageType: 'Imported', userId: `u-${i % 7}`, content: { n: i } }),
      ).join('\n') + '\n',
    );
    const before = await head();
    // When it is imported
    const r = await runCli(['publish', '--file', file, '--batch', '1000'], env);
    // Then all are stored, contiguously, and the progress went to stderr
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `Imported 2500 messages from ${file}: 2500 stored, 0 idempotent repeats, 0 duplicates, indices ${before + 1}..${before + 2500}`,
    );
    expect(r.stderr).toMatch(/Importing \[#+\] 2500\/2500 100%/);
    expect(await head()).toBe(before + 2500);
    const last = await http(server.baseUrl, 'GET', `/api/events/${before + 2500}`);
    expect(last.body).toMatchObject({ messageType: 'Imported', body: { n: 2499 } });
    // And a bad line imports nothing and names the line
    writeFileSync(file, '{"messageType":"Imported","content":{}}\n{oops\n');
    const bad = await runCli(['publish', '--file', file], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${file}:2 is not valid JSON`);
    expect(await head()).toBe(before + 2500);
  });

  it('publish --file without --batch streams the file to the bulk import: one contiguous range, or nothing with the line named', async () => {
    // Given a file of 3,000 messages
    const dir = tempDir('ordinal-cli-bulk-');
    const file = join(dir, 'events.ndjson');
    const lines = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify({ messageType: 'Bulk', userId: `u-${i % 5}`, content: { n: i } }),
    );
    writeFileSync(file, lines.join('\n') + '\n');
    const before = await head();
    // When it is imported
    const r = await runCli(['publish', '--file', file], env);
    // Then all are stored in one range, and the progress went to stderr
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `Imported 3000 messages from ${file}: 3000 stored, 0 idempotent repeats, indices ${before + 1}..${before + 3000}`,
    );
    expect(r.stderr).toMatch(/Sending \[#+\] \d+\/\d+ 100%/);
    expect(await head()).toBe(before + 3000);
    // And a line the JSON rules refuse (an integer JSON cannot carry exactly) imports nothing and names the line
    lines[1700] = '{"messageType":"Bulk","content":{"n":9007199254740993}}';
    writeFileSync(file, lines.join('\n') + '\n');
    const bad = await runCli(['publish', '--file', file], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${file}:1701 content.n is the number 9007199254740993`);
    expect(await head()).toBe(before + 3000);
  });

  it('publish --file --batch checks every line with the server rules before the first write, and names the file line', async () => {
    // Given a file of 2,000 messages with blank lines, and an unknown field on the 1,500th message
    const dir = tempDir('ordinal-cli-checked-');
    const file = join(dir, 'events.ndjson');
    const lines = Array.from({ length: 2000 }, (_, i) =>
      JSON.stringify({ messageType: 'Checked', content: { n: i } }),
    );
    lines[1499] = JSON.stringify({ messageType: 'Checked', content: { n: 1499 }, colour: 'red' });
    const text = ['', ...lines.slice(0, 10), '', ...lines.slice(10)].join('\n') + '\n';
    writeFileSync(file, text);
    const before = await head();
    // When it is published in batches of 100
    const r = await runCli(['publish', '--file', file, '--batch', '100'], env);
    // Then nothing is stored, and the line is named by its place in the file (line 1,502)
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}:1502 has the unknown field "colour"`);
    expect(r.stderr).toContain('nothing was published');
    expect(await head()).toBe(before);
  });

  it('publish --file --batch that stops on the server says which file lines are stored and prints the command that resumes without repeating one', async () => {
    // Given 300 messages with blank lines between them, two of them so large that their batch
    // is over the server's body limit (1 MiB) while each alone is under it
    const dir = tempDir('ordinal-cli-resume-');
    const file = join(dir, 'events.ndjson');
    const pad = 'x'.repeat(600_000);
    const text: string[] = [];
    const lineOf: number[] = [];
    for (let n = 0; n < 300; n++) {
      if (n % 50 === 0) text.push('');
      lineOf.push(text.length + 1);
      text.push(
        JSON.stringify({
          messageType: 'Resumed',
          content: n === 150 || n === 151 ? { n, pad } : { n },
        }),
      );
    }
    writeFileSync(file, text.join('\n') + '\n');
    const stored = async () =>
      (
        await db.query<{ n: string }>(
          "SELECT body->>'n' AS n FROM messages WHERE message_type = 'Resumed' ORDER BY index",
        )
      ).map((row) => Number(row.n));
    // When it is published in batches of 100
    const r = await runCli(['publish', '--file', file, '--batch', '100'], env);
    // Then it stops at the second batch, named by file lines, with what was stored before it
    expect(r.code).toBe(1);
    const [from, to] = [lineOf[100], lineOf[199]];
    expect(r.stderr).toContain(
      `Stopped at ${file}:${from}: the batch of lines ${from}..${to} was not stored`,
    );
    expect(r.stderr).toContain(`100 messages from lines 1..${from - 1} are stored`);
    expect(await stored()).toEqual(Array.from({ length: 100 }, (_, n) => n));
    // And the command it prints resumes there (here in batches of 1, which the limit lets through)
    const resume = /To resume: ordinal (.+)\n/.exec(r.stderr)?.[1];
    expect(resume).toBe(`publish --file ${file} --batch 100 --from-line ${from}`);
    const again = await runCli(
      [...resume!.split(' ').slice(0, -3), '1', '--from-line', String(from)],
      env,
    );
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Imported 200 messages from ${file} (from line ${from})`);
    // Then every message is stored exactly once
    expect(await stored()).toEqual(Array.from({ length: 300 }, (_, n) => n));
  });

  it('takes --url and --token before the command as well as after it', async () => {
    const bare = { PATH: process.env.PATH ?? '' };
    // When the connection flags come first, in either form
    const [spaced, joined, grouped] = await Promise.all([
      runCli(['--url', server.baseUrl, '--token', 'dev-ordinal-token', 'status', '--json'], bare),
      runCli(
        [`--url=${server.baseUrl}`, '--token=reader-secret', 'projections', 'list', '--json'],
        bare,
      ),
      runCli(['projections', '--url', server.baseUrl, '--token', 'reader-secret', 'list'], bare),
    ]);
    // Then the command runs against that server with that token
    expect([spaced.code, spaced.stderr]).toEqual([0, '']);
    expect(JSON.parse(spaced.stdout)).toHaveProperty('head');
    expect([joined.code, joined.stderr]).toEqual([0, '']);
    expect([grouped.code, grouped.stderr]).toEqual([0, '']);
  });

  it('tail --from -N starts N messages before the next one (the last N), as --from -N or --from=-N', async () => {
    // Given the last three messages of the log
    for (const n of [1, 2, 3])
      await http(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'Recent',
        content: { n },
      });
    const last = await head();
    // When tail starts three before the next message, in either form
    const [spaced, joined, zero] = await Promise.all([
      runCli(['tail', '--from', '-3', '--until', String(last), '--json'], env),
      runCli(['tail', '--from=-3', '--until', String(last), '--json'], env),
      runCli(['tail', '--from', '-0'], env),
    ]);
    // Then it prints exactly those three, and refuses -0
    for (const r of [spaced, joined]) {
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(
        r.stdout
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { id: number }).id),
      ).toEqual([last - 2, last - 1, last]);
    }
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--from');
  });

  it('tail prints history and live messages, filtered by type, readable or as JSON, and stops at --until', async () => {
    const from = (await head()) + 1;
    // Given a tail started before the messages exist
    const tail = spawnCli(
      ['tail', '--from', String(from), '--until', String(from + 2), '--types', 'Tailed'],
      env,
    );
    const json = spawnCli(
      ['tail', '--from', String(from), '--until', String(from + 2), '--json'],
      env,
    );
    try {
      // When three messages arrive, one of another type
      for (const [type, n] of [
        ['Tailed', 1],
        ['Other', 2],
        ['Tailed', 3],
      ] as const) {
        await http(server.baseUrl, 'PUT', '/api/events/message', {
          messageType: type,
          userId: 'tail-user',
          content: { n },
        });
      }
      // Then both exit at --until: the readable one shows the two of its type, one line each
      expect(await tail.exited).toBe(0);
      const lines = tail.stdout().trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        new RegExp(
          `^#${from}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ  Tailed  user=tail-user  \\{"n":1\\}$`,
        ),
      );
      expect(lines[1]).toContain(`#${from + 2}`);
      expect(await json.exited).toBe(0);
      expect(
        json
          .stdout()
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).id),
      ).toEqual([from, from + 1, from + 2]);
    } finally {
      tail.child.kill();
      json.child.kill();
    }
  });

  it('ends quietly (exit 0, nothing on stderr) when its stdout is closed, as by head: status --json, tail', async () => {
    // Given a message to tail
    await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Piped',
      content: { n: 1 },
    });
    // When `ordinal status --json | head -c 20` and `ordinal tail --from 1 | head -1` write to
    // a pipe nobody reads any more (tail would otherwise follow the log for ever)
    const piped = [
      spawnCli(['status', '--json'], env, { stdoutClosed: true }),
      spawnCli(['tail', '--from', '1'], env, { stdoutClosed: true }),
    ];
    try {
      // Then each exits 0 without a word on stderr (no stack trace)
      expect(await Promise.all(piped.map(async (p) => [await p.exited, p.stderr()]))).toEqual([
        [0, ''],
        [0, ''],
      ]);
    } finally {
      for (const p of piped) p.child.kill();
    }
  });

  it('status shows the head, subscriptions, interfaces and the hole as a table, or JSON', async () => {
    const h = await head();
    await http(server.baseUrl, 'GET', `/api/projections?atLeast=${h}`);
    const table = await runCli(['status'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`Head +${h} `));
    expect(table.stdout).toMatch(/Held hole +none/);
    expect(table.stdout).toMatch(/NAME +KIND +STREAM +POSITION +LAG +STATE +OWNER/);
    // (the audit subscription runs in the server: its owner is that process, by pid and host)
    expect(table.stdout).toMatch(
      /audit +subscription +\$all +\d+ +\d+ +running +\d+@\S+ \(\d+ ms ago\)/,
    );
    expect(table.stdout).not.toContain('[object Object]');
    expect(table.stdout).toMatch(new RegExp(`${billing} +replayable`));
    const json = await runCli(['status', '--json'], { ...env, ORDINAL_TOKEN: 'reader-secret' });
    expect(json.code).toBe(0);
    const status = JSON.parse(json.stdout);
    expect(status.head).toBe(h);
    expect(status.projections.map((p: { name: string }) => p.name)).toContain('audit');
    expect(status.interfaces[0]).toMatchObject({ name: billing, type: 'replayable' });
  });

  it('streams metadata sets and shows a rule, streams delete deletes, scavenge erases and status says so', async () => {
    // Given a stream of three events
    await http(server.baseUrl, 'POST', '/api/streams/cli-1/events', {
      expectedVersion: 0,
      events: [1, 2, 3].map((n) => ({ eventType: 'Noted', data: { n } })),
    });
    // When its metadata is set, then read, from the command
    const set = await runCli(
      ['streams', 'metadata', 'cli-1', '--set', '{"truncateBefore": 2}'],
      env,
    );
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      streamId: 'cli-1',
      truncateBefore: 2,
      metadataVersion: 1,
    });
    const rule = await runCli(['streams', 'metadata', 'notes-*', '--set', '{"maxCount": 5}'], env);
    expect(JSON.parse(rule.stdout)).toMatchObject({ streamId: 'notes-*', maxCount: 5 });
    // And a wrong expected version is refused
    const stale = await runCli(
      ['streams', 'metadata', 'cli-1', '--set', '{}', '--expected-version', '0'],
      env,
    );
    expect(stale.code).not.toBe(0);
    // When a scavenge runs, then the stream is deleted
    const scavenged = await runCli(['scavenge'], env);
    expect(scavenged.code).toBe(0);
    expect(scavenged.stdout).toMatch(/Scavenge run \d+ finished: 1 rows erased, \d+ bytes freed/);
    const deleted = await runCli(['streams', 'delete', 'cli-1', '--expected-version', '3'], env);
    expect([deleted.code, deleted.stdout]).toEqual([0, 'Stream cli-1 deleted\n']);
    expect((await http(server.baseUrl, 'GET', '/api/streams/cli-1')).body.code).toBe(
      'stream_deleted',
    );
    // Then status shows the last run
    const status = await runCli(['status'], env);
    expect(status.stdout).toMatch(
      /Scavenge +run \d+ finished .*\(1 rows erased, \d+ bytes freed\)/,
    );
  });

  it('segments list prints the log’s segments as a table, or JSON; a read token is refused (5)', async () => {
    const listed = await runCli(['segments', 'list'], env);
    expect(listed.code).toBe(0);
    const [title, header, first] = listed.stdout.split('\n');
    expect(title).toBe('Segments of 10000000 indices');
    expect(header).toMatch(/^FIRST +LAST +TIER +ROWS +BYTES +TABLE$/);
    expect(first).toMatch(/^1 +10000000 +hot +\S+ +\d+ +messages_0000000000000001$/);
    const json = await runCli(['segments', 'list', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({
      segmentSize: 10_000_000,
      segments: [{ firstIndex: 1, lastIndex: 10_000_000, tier: 'hot' }, { firstIndex: 10_000_001 }],
    });
    const refused = await runCli(['segments', 'list'], { ...env, ORDINAL_TOKEN: 'reader-secret' });
    expect(refused.code).toBe(5);
  });

  it('projections rebuild replays with progress until caught up', async () => {
    const h = await head();
    const before = audited.length;
    const r = await runCli(['projections', 'rebuild', 'audit'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Rebuilt audit: caught up at ${h}`);
    expect(r.stderr).toContain(`Rebuilding audit up to index ${h}`);
    // The subscription saw the log again from the start
    expect(audited.length - before).toBeGreaterThanOrEqual(h);
    const missing = await runCli(['projections', 'rebuild', 'nope'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('The server answered 404');
  });

  it('interfaces rewind resends everything after the new bookmark', async () => {
    const h = await head();
    // Given the interface has sent the whole log to its sink
    await waitFor(
      async () => (await broker.count(`${billing}.sink`)) >= h,
      20_000,
      'the sink filled',
    );
    const sent = await broker.count(`${billing}.sink`);
    // When it is rewound to 0
    const r = await runCli(['interfaces', 'rewind', billing, '--to', '0'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Interface ${billing} rewound: bookmark 0`);
    // Then every message is sent again
    await waitFor(
      async () => (await broker.count(`${billing}.sink`)) >= sent + h,
      20_000,
      'the resend',
    );
    const list = await runCli(['interfaces', 'list'], env);
    expect(list.stdout).toMatch(new RegExp(`${billing} +replayable +0 `));
    const usage = await runCli(['interfaces', 'rewind', billing], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('needs --to <index>');
    const missing = await runCli(['interfaces', 'rewind', 'nope', '--to', '1'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No interface 'nope'");
  });

  it('dead-letters list shows the rejected queue; redrive moves it back to the input with a count', async () => {
    // Given a malformed input message (no messageType) dead-lettered by the server (once it consumes)
    await waitFor(async () => (await broker.consumers(input)) === 1, 15_000, 'the input consumer');
    await broker.publish(input, { n: 1 }, {});
    await waitFor(
      async () => (await broker.count(`${input}.rejected`)) === 1,
      15_000,
      'the dead letter',
    );
    const list = await runCli(['dead-letters', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`1 dead letter(s) in ${input}.rejected`);
    expect(list.stdout).toMatch(/rejected +\d{4}-.*\{"n":1\}/);
    // And listing left it there; a fixed message (as after repairing a producer) sits beside it
    expect(await broker.count(`${input}.rejected`)).toBe(1);
    await broker.publish(`${input}.rejected`, { n: 2 }, { messageType: 'Redriven' });
    // When they are redriven
    const redrive = await runCli(['dead-letters', 'redrive'], env);
    expect(redrive.code).toBe(0);
    expect(redrive.stdout).toContain(`Redrove 2 message(s) from ${input}.rejected to ${input}`);
    // Then the good one is stored and the malformed one is rejected again
    await waitFor(
      async () =>
        (await db.query(`SELECT 1 FROM messages WHERE message_type = 'Redriven'`)).length === 1,
      15_000,
      'the redriven message stored',
    );
    await waitFor(
      async () => (await broker.count(`${input}.rejected`)) === 1,
      15_000,
      'the malformed one rejected again',
    );
    const json = await runCli(['dead-letters', 'list', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({
      count: 1,
      messages: [{ messageType: null, body: '{"n":1}' }],
    });
  });

  it('migrate runs every migration on a database and exits; needs DATABASE_URL; says when it cannot reach it', async () => {
    const fresh = await createTestDatabase('ordinal_cli_migrate', { blank: true });
    try {
      const r = await runCli(['migrate'], { DATABASE_URL: fresh.url });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Applied \d+ migration\(s\): .*CreateLog/i);
      const tables = await fresh.query<{ t: string }>(
        `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'`,
      );
      expect(tables.map((t) => t.t)).toEqual(
        expect.arrayContaining([
          'messages',
          'interface_bookmarks',
          'ordinal_migrations',
          'consumer_leases',
        ]),
      );
      // Every migration a server runs (its own schema checks need them all, e.g. a replica reader's).
      const { LOG_MIGRATIONS } = await import('@ordinal/log/internal');
      const { OWNERSHIP_MIGRATIONS } = await import('@ordinal/ownership');
      const { EVENT_SOURCING_MIGRATIONS } = await import('@ordinal/event-sourcing/internal');
      const { SUBSCRIPTIONS_MIGRATIONS } = await import('@ordinal/subscriptions/internal');
      const appliedNames = (
        await fresh.query<{ name: string }>('SELECT name FROM ordinal_migrations')
      ).map((m) => m.name);
      const expected = [
        ...LOG_MIGRATIONS,
        ...OWNERSHIP_MIGRATIONS,
        ...EVENT_SOURCING_MIGRATIONS,
        ...SUBSCRIPTIONS_MIGRATIONS,
      ].map((m) => m.name);
      expect(appliedNames).toEqual(expect.arrayContaining(expected));
      const again = await runCli(['migrate'], { DATABASE_URL: fresh.url });
      expect(again.stdout).toContain('Nothing to migrate');
    } finally {
      await fresh.drop();
    }
    const [none, down] = await Promise.all([
      runCli(['migrate']),
      runCli(['migrate', '--database-url', 'postgres://postgres@127.0.0.1:1/nowhere']),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('set DATABASE_URL');
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('Cannot reach PostgreSQL at 127.0.0.1:1/nowhere');
  });

  it('token prints a new ORDINAL_TOKENS entry the server accepts', async () => {
    const [r, other, bad] = await Promise.all([
      runCli(['token', '--name', 'ingest', '--scopes', 'write+read']),
      runCli(['token']),
      runCli(['token', '--scopes', 'root']),
    ]);
    expect(r.code).toBe(0);
    const [token] = parseTokens(r.stdout.trim());
    expect(token).toMatchObject({ name: 'ingest', scopes: new Set(['write', 'read']) });
    expect(token.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(other.stdout).toMatch(/^service:[A-Za-z0-9_-]{43}:read\+write\n$/);
    expect(other.stdout).not.toContain(token.secret);
    expect(bad.code).toBe(2);
  });

  it('names an unreachable server (3), a refused token (4) and a missing scope (5) (no token: development-token.e2e-spec)', async () => {
    const [down, wrong, scope] = await Promise.all([
      runCli(['status', '--url', 'http://127.0.0.1:1'], { ORDINAL_TOKEN: 'x' }),
      runCli(['status'], { ...env, ORDINAL_TOKEN: 'wrong' }),
      runCli(['publish', 'X', '{}', '--token', 'reader-secret'], env),
    ]);
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('Cannot reach the Ordinal server at http://127.0.0.1:1');
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain('refused the token (401');
    expect(scope.code).toBe(5);
    expect(scope.stderr).toContain('lacks the scope');
  });

  it('runs as `npx ordinal` in this repository', async () => {
    const { stdout } = await promisify(execFile)(
      'npx',
      ['--no-install', 'ordinal', 'token', '--name', 'npx'],
      { cwd: join(process.cwd()), env: { ...process.env } },
    );
    expect(stdout).toMatch(/^npx:[A-Za-z0-9_-]{43}:read\+write\n$/);
  });
});

describe('ordinal projections rebuild of a versioned projection another process runs', () => {
  const NAME = 'ledger';
  let db: TestDatabase;
  let server: TestServer;
  let worker: WorkerProcess | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.query(
      'CREATE TABLE applied (id bigserial PRIMARY KEY, index bigint NOT NULL UNIQUE, pid integer NOT NULL, key text)',
    );
    server = await startServer(db.url);
    // Candidates are promoted by hand only: a blue/green rebuild stays a candidate.
    worker = await spawnWorker({
      DATABASE_URL: db.url,
      TAKEOVER_MS: '2000',
      PROJECTION: NAME,
      VERSION: '1',
      PROMOTE_AT_LAG: 'false',
      SIDE_EFFECT_ROWS: '0',
    });
    env = { ORDINAL_URL: server.baseUrl, ORDINAL_TOKEN: 'dev-ordinal-token' };
  });
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await server?.close();
    await db?.drop();
  });

  it('--in-place while a blue/green candidate exists follows the in-place rebuild of the serving build', async () => {
    // Given events applied by the worker, and a blue/green candidate being built
    const appended = await http(server.baseUrl, 'POST', '/api/streams/ledger-1/events', {
      expectedVersion: 'no_stream',
      events: [1, 2, 3].map((n) => ({ eventType: 'Tick', data: { n } })),
    });
    expect(appended.status).toBe(201);
    const h = (await http(server.baseUrl, 'GET', '/api/events/head')).body.head as number;
    await waitFor(
      async () =>
        (await http(server.baseUrl, 'GET', `/api/projections/${NAME}?atLeast=${h}&timeoutMs=2000`))
          .body.reached,
      20_000,
      'the worker applying the events',
    );
    const blueGreen = await http(server.baseUrl, 'POST', `/api/projections/${NAME}/rebuild`);
    expect(blueGreen.status).toBe(202);
    // When the serving build is rebuilt in place from the CLI
    const r = await runCli(['projections', 'rebuild', NAME, '--in-place', '--timeout', '30'], env);
    // Then it follows that rebuild (not the candidate's promotion) and says it caught up
    expect(r.stderr).toContain(`Rebuilding ${NAME} up to index ${h}`);
    expect(r.stderr).not.toContain('blue/green');
    expect([r.code, r.stdout]).toEqual([0, `Rebuilt ${NAME}: caught up at ${h}\n`]);
    // And the candidate is still a candidate
    const versions = (await http(server.baseUrl, 'GET', `/api/projections/${NAME}`)).body
      .versions as { build: number; state: string }[];
    expect(versions.map((v) => [v.build, v.state])).toEqual([
      [1, 'serving'],
      [2, 'candidate'],
    ]);
  });
});
