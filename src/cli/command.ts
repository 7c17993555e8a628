import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEVELOPMENT_TOKEN, OrdinalClient, OrdinalHttpError } from '@ordinal/client';
import { CliError, EXIT, UsageError } from './cli-error.js';
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
  /** An HTTP client for the server, with the token of `--token` or ORDINAL_TOKEN (and the tenant of `--tenant` or ORDINAL_TENANT). */
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
  /** Talks to a server: takes --url, --token and --tenant. @default true */
  server?: boolean;
  run(context: CommandContext): Promise<number | void>;
}

/** The default server when neither --url nor ORDINAL_URL says. */
export const DEFAULT_URL = 'http://localhost:8083';

const SERVER_OPTIONS: Options = {
  url: { type: 'string' },
  token: { type: 'string' },
  tenant: { type: 'string' },
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
      '  --token TOKEN  a bearer token (ORDINAL_TOKEN; none: the development token for a server on this machine)',
      '  --tenant ID    act for this tenant: sent as Ordinal-Tenant (ORDINAL_TENANT; a token with the tenants scope)',
    );
  }
  lines.push('  --help         this text');
  return lines.join('\n') + '\n';
}

/**
 * `--flag -5` for a flag that takes a value becomes `--flag=-5`: parseArgs would otherwise read
 * the negative number as an option ("argument is ambiguous"). Nothing after `--` is touched.
 */
export function joinNegativeValues(args: string[], options: Options): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') return [...joined, ...args.slice(i)];
    const name = arg.startsWith('--') ? arg.slice(2) : null;
    if (name && options[name]?.type === 'string' && /^-\d+$/.test(args[i + 1] ?? '')) {
      joined.push(`${arg}=${args[++i]}`);
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** Parses `args` for `command` and runs it; --help prints its help. */
export async function runCommand(
  command: Command,
  args: string[],
  term: Terminal,
  env: Record<string, string | undefined>,
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  const options: Options = {
    ...(command.options ?? {}),
    ...(command.server === false ? {} : SERVER_OPTIONS),
    help: { type: 'boolean', short: 'h' },
  };
  try {
    parsed = parseArgs({
      args: joinNegativeValues(args, options),
      options,
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
  const given = (values.token as string | undefined) || env.ORDINAL_TOKEN || '';
  // The tenant to act for (docs/tenants.md): the server checks it (400 invalid_tenant, 403 tenant_forbidden).
  const tenant = (values.tenant as string | undefined) || env.ORDINAL_TENANT || undefined;
  // No token for a server on this machine: the development token, which only a development server accepts.
  const development = given === '' && command.server !== false && isLoopback(baseUrl);
  let client: OrdinalClient | null = null;
  const context: CommandContext = {
    values,
    positionals: parsed.positionals,
    term,
    env,
    baseUrl,
    client: () => {
      if (!client && development)
        term.err(
          `ordinal: no token set (ORDINAL_TOKEN or --token): using the development token, which a development server on this machine accepts\n`,
        );
      return (client ??= new OrdinalClient({
        baseUrl,
        token: development ? DEVELOPMENT_TOKEN : given,
        ...(tenant === undefined ? {} : { tenant }),
      }));
    },
  };
  try {
    return (await command.run(context)) ?? 0;
  } catch (error) {
    if (development && error instanceof OrdinalHttpError && error.status === 401)
      throw new CliError(
        `The server at ${baseUrl} refused the development token (401): it is not a development server. Set ORDINAL_TOKEN or pass --token`,
        EXIT.unauthorized,
      );
    throw error;
  }
}

/** Whether `baseUrl` names this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopback(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return false;
  }
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}
