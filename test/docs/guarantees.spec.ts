import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * docs/guarantees.md says each guarantee is tested; this spec makes that checked. A guarantee
 * is a paragraph or list item starting with a bold lead, or a row of the readers' table; the
 * table under "Where each guarantee is tested" must name, for every one, tests that exist.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOC = join(ROOT, 'docs', 'guarantees.md');
const MAP_HEADING = '## Where each guarantee is tested';

/** One named test: a file and a test (or describe) title in it. */
interface NamedTest {
  file: string;
  title: string;
}

/** The cells of a markdown table row (`| a | b |` → `['a', 'b']`). */
function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());
}

/** The guarantees the document states, by their bold lead or reader name, in document order. */
export function guaranteesOf(doc: string): string[] {
  const body = doc.slice(0, doc.indexOf(MAP_HEADING));
  const found: string[] = [];
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const lead = /^(?:- )?\*\*(.+?)\*\*/.exec(lines[i]);
    if (lead) found.push(lead[1].replace(/[.:]$/, ''));
    if (/^\| reader \|/.test(lines[i])) {
      // The readers' table: a row per reader after the header and its separator.
      for (i += 2; i < lines.length && lines[i].startsWith('|'); i++)
        found.push(cells(lines[i])[0]);
    }
  }
  return found;
}

/** The table of tests: guarantee → named tests. */
export function testMapOf(doc: string): Map<string, NamedTest[]> {
  const start = doc.indexOf(MAP_HEADING);
  if (start < 0) throw new Error(`docs/guarantees.md has no "${MAP_HEADING}" section`);
  const rows = doc
    .slice(start)
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2);
  const map = new Map<string, NamedTest[]>();
  for (const row of rows) {
    const [guarantee, tests = ''] = cells(row);
    const named = tests
      .split('<br>')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0)
      .map((entry) => {
        const m = /^`([^`]+)` › (.+)$/.exec(entry);
        if (!m) throw new Error(`"${entry}" (row ${guarantee}) is not \`file\` › title`);
        return { file: m[1], title: m[2] };
      });
    if (map.has(guarantee)) throw new Error(`"${guarantee}" has two rows`);
    map.set(guarantee, named);
  }
  return map;
}

/** Unescapes a JavaScript string literal's body (enough for test titles). */
const unescape = (text: string) => text.replace(/\\(.)/g, '$1');

/**
 * The titles of a spec file's `it`, `test` and `describe` calls (`.each` included), each as a
 * pattern: an interpolation (`${…}`, `%s`, `$name`) matches any text.
 */
export function titlePatternsOf(source: string): RegExp[] {
  const call =
    /\b(?:it|test|describe)(?:\.each\([\s\S]*?\))?\(\s*(['"`])((?:\\.|(?!\1)[\s\S])*)\1/g;
  const patterns: RegExp[] = [];
  for (const [, , literal] of source.matchAll(call)) {
    const parts = unescape(literal).split(/\$\{[^}]*\}|%[sdifjo#]|\$[A-Za-z_]\w*/);
    // A title that is only an interpolation names nothing by itself.
    if (parts.join('').trim().length === 0) continue;
    const escaped = parts.map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    patterns.push(new RegExp(`^${escaped.join('.+')}$`));
  }
  return patterns;
}

describe('docs/guarantees.md', () => {
  const doc = readFileSync(DOC, 'utf8');

  it('names at least one test for every guarantee, and only for guarantees it states', () => {
    // Given the guarantees the document states and its table of tests
    const guarantees = guaranteesOf(doc);
    const map = testMapOf(doc);
    // Then every guarantee has a row with a test, and every row is a guarantee
    expect(guarantees.length).toBeGreaterThanOrEqual(20);
    expect(guarantees.filter((g) => (map.get(g)?.length ?? 0) === 0)).toEqual([]);
    expect([...map.keys()].filter((g) => !guarantees.includes(g))).toEqual([]);
  });

  it('names only test files that exist and titles they contain', () => {
    // Given every named test
    const named = [...testMapOf(doc).values()].flat();
    // Then its file exists and has a test (or describe) with that title
    const missing = named.filter(({ file, title }) => {
      const path = join(ROOT, file);
      if (!/\.(spec|int-spec|e2e-spec)\.ts$/.test(file) || !existsSync(path)) return true;
      return !titlePatternsOf(readFileSync(path, 'utf8')).some((p) => p.test(title));
    });
    expect(missing).toEqual([]);
  });

  it('refuses what it must: an unnamed guarantee, a missing title, a title-only interpolation', () => {
    // Given a document with a second guarantee and a table naming a test for the first only
    const sample = [
      '**G1 — One.** text',
      '- **two**: text',
      '',
      MAP_HEADING,
      '',
      '| guarantee | tests |',
      '|---|---|',
      '| G1 — One | `test/x.spec.ts` › does one |',
    ].join('\n');
    // Then the second has no test
    expect(guaranteesOf(sample)).toEqual(['G1 — One', 'two']);
    expect(testMapOf(sample).get('two')).toBeUndefined();
    // And titles match whole, with interpolations as wildcards, and never through a bare `%s`
    const patterns = titlePatternsOf(
      "it('does one', f); it(`runs (${n} runs)`, f); it.each([1])('%s', f);",
    );
    expect(patterns).toHaveLength(2);
    expect(patterns.some((p) => p.test('does one'))).toBe(true);
    expect(patterns.some((p) => p.test('does one more'))).toBe(false);
    expect(patterns.some((p) => p.test('runs (20 runs)'))).toBe(true);
    expect(patterns.some((p) => p.test('anything'))).toBe(false);
  });
});
