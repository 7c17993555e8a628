import { COMMANDS } from './commands/index.js';
import { DEFAULT_URL, runCommand, type Command } from './command.js';
import { splitConnectionFlags, urlFlag } from './connection-flags.js';
import { CliError, EXIT } from './cli-error.js';
import { explainError } from './http-errors.js';
import type { Terminal } from './terminal.js';

function overview(commands: Command[], group?: string): string {
  const width = Math.max(...commands.map((c) => c.usage.split(' ').slice(0, 3).join(' ').length));
  const lines = commands.map(
    (c) => `  ordinal ${c.name.padEnd(width)}  ${c.summary.split('. ')[0].replace(/\.$/, '')}`,
  );
  return [
    group ? `Usage: ordinal ${group} <command>` : 'Usage: ordinal <command> [flags]',
    '',
    'Commands:',
    ...lines,
    '',
    'Every command takes --help. Server commands read ORDINAL_URL (default http://localhost:8083) and',
    'ORDINAL_TOKEN, or --url and --token; with no token, a server on this machine gets the development',
    'token. --tenant (ORDINAL_TENANT) acts for a tenant. Exit codes: 0 ok, 1 failed, 2 usage,',
    '3 unreachable, 4 401, 5 403.',
    '',
  ].join('\n');
}

/** Runs `ordinal <args>`; returns the exit code. Errors are one line on stderr. */
export async function cli(
  args: string[],
  term: Terminal,
  env: Record<string, string | undefined>,
): Promise<number> {
  // Connection flags may come before the command's name too: `ordinal --url U status`.
  const { words, flags } = splitConnectionFlags(args);
  const [first, second] = words;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    term.out(overview(COMMANDS));
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  if (first === '--version') {
    term.out('0.1.0\n');
    return EXIT.ok;
  }
  const command =
    COMMANDS.find((c) => c.name === `${first} ${second}`) ?? COMMANDS.find((c) => c.name === first);
  if (!command) {
    const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
    if (group.length > 0) {
      const known = second === undefined || second === '--help' || second === '-h';
      (known ? term.out : term.err)(
        (known ? '' : `Unknown command: ordinal ${first} ${second}\n\n`) + overview(group, first),
      );
      return known && second !== undefined ? EXIT.ok : EXIT.usage;
    }
    term.err(`Unknown command: ${first}\n\n${overview(COMMANDS)}`);
    return EXIT.usage;
  }
  const rest = [...words.slice(command.name.split(' ').length), ...flags];
  const baseUrl = (urlFlag(flags) || env.ORDINAL_URL || DEFAULT_URL).replace(/\/+$/, '');
  try {
    return await runCommand(command, rest, term, env);
  } catch (error) {
    const failure = error instanceof CliError ? error : explainError(error, baseUrl);
    term.err(`ordinal ${command.name}: ${failure.message}\n`);
    return failure.exitCode;
  }
}
