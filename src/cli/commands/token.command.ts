import { randomBytes } from 'node:crypto';
import type { Command } from '../command.js';
import { UsageError } from '../cli-error.js';

const SCOPES = ['read', 'write', 'admin', 'personal', 'tenants'];
/** A tenant id (docs/tenants.md; TENANT_PATTERN of @ordinal/log). */
const TENANT = /^[A-Za-z0-9][A-Za-z0-9_.]{0,62}$/;

export const tokenCommand: Command = {
  name: 'token',
  usage: 'token [--name NAME] [--scopes read+write] [--tenant ID]',
  summary:
    'Prints a new token entry for the server\'s ORDINAL_TOKENS (name:secret:scopes[:tenant]; join entries with ";"). The secret is 32 random bytes, base64url.',
  details: [
    'Flags:',
    '  --name NAME      who uses it (default: service)',
    '  --scopes S+S     read, write, admin, personal, tenants joined by + (default: read+write)',
    "  --tenant ID      bind the token to a tenant: it acts for that tenant's messages only",
    '',
    'Example:',
    '  export ORDINAL_TOKENS="$(ordinal token --name ingest --scopes write);$(ordinal token --name ops --scopes read+write+admin)"',
  ].join('\n'),
  server: false,
  options: { name: { type: 'string' }, scopes: { type: 'string' }, tenant: { type: 'string' } },
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
    const tenant = values.tenant as string | undefined;
    if (tenant !== undefined && !TENANT.test(tenant))
      throw new UsageError(
        `--tenant must be a tenant id (1-63 letters, digits, '_' or '.', starting with a letter or digit), got '${tenant.slice(0, 80)}'`,
      );
    if (tenant !== undefined && scopes.includes('tenants'))
      throw new UsageError(
        "--tenant and the tenants scope do not go together: a tenant's token acts for its own tenant only",
      );
    term.out(
      `${name}:${randomBytes(32).toString('base64url')}:${[...new Set(scopes)].join('+')}${tenant === undefined ? '' : `:${tenant}`}\n`,
    );
  },
};
