import { randomBytes } from 'node:crypto';
import type { Command } from '../command.js';
import { UsageError } from '../cli-error.js';

const SCOPES = ['read', 'write', 'admin', 'personal'];

export const tokenCommand: Command = {
  name: 'token',
  usage: 'token [--name NAME] [--scopes read+write]',
  summary:
    'Prints a new token entry for the server\'s ORDINAL_TOKENS (name:secret:scopes; join entries with ";"). The secret is 32 random bytes, base64url.',
  details: [
    'Flags:',
    '  --name NAME      who uses it (default: service)',
    '  --scopes S+S     read, write, admin joined by + (default: read+write)',
    '',
    'Example:',
    '  export ORDINAL_TOKENS="$(ordinal token --name ingest --scopes write);$(ordinal token --name ops --scopes read+write+admin)"',
  ].join('\n'),
  server: false,
  options: { name: { type: 'string' }, scopes: { type: 'string' } },
  // eslint-disable-next-line @typescript-eslint/require-await -- Command.run is async; this one's work is synchronous
  async run({ values, term }) {
    const name = (values.name as string | undefined) ?? 'service';
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(name))
      throw new UsageError(`--name must be 1-100 characters of [A-Za-z0-9._-], got '${name}'`);
    const scopesFlag = (values.scopes as string | undefined) ?? 'read+write';
    const scopes = scopesFlag.split('+').map((s) => s.trim());
    const unknown = scopes.filter((s) => !SCOPES.includes(s));
    if (unknown.length > 0 || scopes.length === 0)
      throw new UsageError(`--scopes takes ${SCOPES.join(', ')} joined by +, got '${scopesFlag}'`);
    term.out(
      `${name}:${randomBytes(32).toString('base64url')}:${[...new Set(scopes)].join('+')}\n`,
    );
  },
};
