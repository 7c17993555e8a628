import type { Command } from '../command.js';
import { UsageError } from '../cli-error.js';
import type { TenantDeletionBody } from '../server-bodies.js';

export const tenantsDeleteCommand: Command = {
  name: 'tenants delete',
  usage: 'tenants delete TENANT [--reason TEXT] [--json]',
  summary:
    "Deletes a tenant (docs/tenants.md#deleting-a-tenant): every position of it reads back as a deleted tombstone from now on, its appends are refused (tenant_deleted), every personal-data key of its subjects is destroyed, and a $tenant-deleted marker is appended; the next scavenge erases its rows' bodies. Deleting twice changes nothing. Needs an admin token.",
  details: [
    'Flags:',
    '  --reason TEXT  why (kept with the deletion)',
    '  --json         the deletion as JSON',
  ].join('\n'),
  options: { reason: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals, term, client }) {
    const [tenant] = positionals;
    if (!tenant) throw new UsageError('tenants delete needs the tenant id');
    const query =
      typeof values.reason === 'string' && values.reason !== ''
        ? `?reason=${encodeURIComponent(values.reason)}`
        : '';
    const { body } = await client().request<TenantDeletionBody>(
      'DELETE',
      `/api/admin/tenants/${encodeURIComponent(tenant)}${query}`,
    );
    if (values.json) return void term.out(JSON.stringify(body) + '\n');
    term.out(
      body.alreadyDeleted
        ? `Tenant ${body.tenant} was already deleted at ${body.deletedAt} by ${body.deletedBy} (through index ${body.throughIndex}, marker at index ${body.markerIndex}); nothing done\n`
        : `Tenant ${body.tenant} deleted at ${body.deletedAt}: its positions through index ${body.throughIndex} read as deleted tombstones, ${body.keysDestroyed} personal-data key(s) destroyed, marker $tenant-deleted at index ${body.markerIndex}; run a scavenge to erase its rows\n`,
    );
  },
};
