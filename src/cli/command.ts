import { parseArgs, type ParseArgsConfig } from 'node:util';
import { OrdinalClient } from '@ordinal/client';
import { UsageError } from './cli-error.js';
import type { Terminal } from './terminal.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** What a command gets: its parsed flags and positionals, where to write, and a client on demand. */
export interface CommandContext {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  term: Terminal;
  env: Record<string, string | undefined>;
  /** The server the flags or ORDINAL_URL name (http://localhost:8083 when neither). */
  baseUrl: string;
  /** An HTTP client for the server, with the token of `--token` or ORDINAL_TOKEN. */
  client: () => OrdinalClient;
}

/** One subcommand: its flags, help text and body. */
export interface Command {
  /** e.g. `projections rebuild` */
  name: string;
  /** `<name> [--flag]` after `ordinal` */
  usage: string;
  summary: string;
  /** More lines of help (flags, examples). */
  details?: string;
  options?: Options;
  /** Talks to a server: takes --url and --token. @default true */
  server?: boolean;
  run(context: CommandContext): Promise<number | void>;
}

/** The default server when neither --url nor ORDINAL_URL says. */
export const DEFAULT_URL = 'http://localhost:8083';

const SERVER_OPTIONS: Options = {
  url: { type: 'string' },
  token: { type: 'string' },
};

/** The help text of one command. */
export function helpOf(command: Command): string {
  const lines = [`Usage: ordinal ${command.usage}`, '', command.summary];
  if (command.details) lines.push('', command.details.trimEnd());
  if (command.server !== false) {
    lines.push(
      '',
      'Connection:',
      `  --url URL      the server (ORDINAL_URL; default ${DEFAULT_URL})`,
      '  --token TOKEN  a bearer token (ORDINAL_TOKEN)',
    );
  }
  lines.push('  --help         this text');
  return lines.join('\n') + '\n';
}

/** Parses `args` for `command` and runs it; --help prints its help. */
export async function runCommand(
  command: Command,
  args: string[],
  term: Terminal,
  env: Record<string, string | undefined>,
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      options: {
        ...(command.options ?? {}),
        ...(command.server === false ? {} : SERVER_OPTIONS),
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(
      `${(error as Error).message.split('\n')[0]}\nUsage: ordinal ${command.usage} (ordinal ${command.name} --help)`,
    );
  }
  const values = parsed.values as CommandContext['values'];
  if (values.help) {
    term.out(helpOf(command));
    return 0;
  }
  const baseUrl = ((values.url as string | undefined) || env.ORDINAL_URL || DEFAULT_URL).replace(
    /\/+$/,
    '',
  );
  let client: OrdinalClient | null = null;
  const context: CommandContext = {
    values,
    positionals: parsed.positionals,
    term,
    env,
    baseUrl,
    client: () =>
      (client ??= new OrdinalClient({
        baseUrl,
        token: (values.token as string | undefined) || env.ORDINAL_TOKEN || '',
      })),
  };
  return (await command.run(context)) ?? 0;
}
