import { readFileSync } from 'node:fs';
import { HTTP_ERROR_CODES, ORDINAL_ERROR_CODES } from '@ordinal/contract';
import { HTTP_STATUS_BY_CODE, STATUS_BY_CODE } from './status-by-code.js';

const EVERY_CODE = [...ORDINAL_ERROR_CODES, ...HTTP_ERROR_CODES];

const DOC = new URL('../../../../docs/errors.md', import.meta.url);

/** The rows of the table under `## Codes` in docs/errors.md: code → documented status. */
function documentedCodes(markdown: string): Array<{ code: string; status: number }> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Codes\n'));
  if (!section) throw new Error('docs/errors.md has no "## Codes" section');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [code, status] = line
        .split('|')
        .map((cell) => cell.trim())
        .slice(1, 3);
      return { code: code.replaceAll('`', ''), status: Number(status) };
    });
}

describe('docs/errors.md', () => {
  const rows = documentedCodes(readFileSync(DOC, 'utf8'));

  it('documents every error code once, and nothing else', () => {
    // Given the union of codes and the table's rows
    const documented = rows.map((r) => r.code);
    // Then each code of the union has exactly one row
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...EVERY_CODE].sort());
  });

  it("gives each code the status the server's filter answers", () => {
    // Given the documented status of each code
    const documented = Object.fromEntries(rows.map((r) => [r.code, r.status]));
    // Then it is the status the server answers
    expect(documented).toEqual({ ...STATUS_BY_CODE, ...HTTP_STATUS_BY_CODE });
  });

  it('lists each code once in the union', () => {
    expect(new Set(EVERY_CODE).size).toBe(EVERY_CODE.length);
  });
});
