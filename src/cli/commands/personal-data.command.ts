import type { Command } from '../command.js';
import { UsageError } from '../cli-error.js';
import type { ErasureBody, ReapplyBody, RedactBody } from '../server-bodies.js';
import { index } from './args.js';

export const subjectsEraseCommand: Command = {
  name: 'subjects erase',
  usage: 'subjects erase SUBJECT_ID --reason TEXT [--json]',
  summary:
    "Erases a subject's personal data (docs/personal-data.md): destroys its key, so every reader gets the replacements of its fields from now on, appends a $subject-erased marker and records the erasure in the ledger. Erasing twice changes nothing. Needs an admin token.",
  details: [
    'Flags:',
    '  --reason TEXT  why (kept in the erasure ledger), required',
    '  --json         the ledger entry as JSON',
  ].join('\n'),
  options: { reason: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals, term, client }) {
    const [subject] = positionals;
    if (!subject) throw new UsageError('subjects erase needs the subject id');
    if (typeof values.reason !== 'string' || values.reason === '')
      throw new UsageError('subjects erase needs --reason TEXT (kept in the erasure ledger)');
    const { body } = await client().request<ErasureBody>(
      'POST',
      `/api/subjects/${encodeURIComponent(subject)}/erase`,
      { reason: values.reason },
    );
    if (values.json) return void term.out(JSON.stringify(body) + '\n');
    term.out(
      body.alreadyErased
        ? `Subject was already erased at ${body.erasedAt} (marker at index ${body.markerIndex}); nothing done\n`
        : `Subject erased at ${body.erasedAt}; marker $subject-erased at index ${body.markerIndex}\n`,
    );
  },
};

export const erasuresReapplyCommand: Command = {
  name: 'erasures reapply',
  usage: 'erasures reapply',
  summary:
    'Destroys again the key of every subject the erasure ledger names, after a key store was restored from a backup older than an erasure (every server start does it too). Needs an admin token.',
  async run({ term, client }) {
    const { body } = await client().request<ReapplyBody>('POST', '/api/erasures/reapply');
    term.out(
      `Erasure ledger reapplied: ${body.subjects} subject(s) forgotten again${body.tenants ? `, the keys of ${body.tenants} deleted tenant(s) destroyed again` : ''}\n`,
    );
  },
};

export const redactCommand: Command = {
  name: 'redact',
  usage: 'redact [--type MESSAGE_TYPE] [--batch-size N] [--json]',
  summary:
    'Seals in place the personal fields stored in clear before their rule (docs/personal-data.md#legacy-data-in-clear): each row becomes what an append under the rule would have stored, nothing else changes; then a scan looks for rows still in clear. Exits 6 when it finds some. Needs an admin token.',
  details: [
    'Flags:',
    '  --type MESSAGE_TYPE  only this type (default every type with a rule)',
    '  --batch-size N       indices per batch (default 1000)',
    '  --json               the counts as JSON',
  ].join('\n'),
  options: {
    type: { type: 'string' },
    'batch-size': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, term, client }) {
    const request: { messageType?: string; batchSize?: number } = {};
    if (typeof values.type === 'string') request.messageType = values.type;
    if (values['batch-size'] !== undefined)
      request.batchSize = index('--batch-size', values['batch-size'] as string, 1);
    const { body } = await client().request<RedactBody>('POST', '/api/admin/redact', request);
    if (values.json) term.out(JSON.stringify(body) + '\n');
    else {
      term.out(
        `Redacted ${body.messageTypes.join(', ') || 'no type (no rule)'} up to index ${body.through}: ${body.scanned} rows scanned, ${body.rewritten} rewritten (${body.rewrittenErased} of erased subjects), ${body.alreadySealed} already sealed, ${body.unredactable} unredactable\n`,
      );
      for (const row of body.unredactableRows) term.out(`  index ${row.index}: ${row.reason}\n`);
      term.out(
        body.verification.verified
          ? 'Verified: no row of these types holds a personal value in clear\n'
          : `Still in clear: ${body.verification.clearRows} row(s), indices ${body.verification.clearIndices.join(', ')}\n`,
      );
    }
    return body.verification.verified ? 0 : 6;
  },
};
