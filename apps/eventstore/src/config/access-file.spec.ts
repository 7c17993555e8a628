import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './ordinal-config.js';
import { ordinalOptionsFrom } from './ordinal-options.factory.js';

describe('ORDINAL_ACCESS_RULES and ORDINAL_AUDIT', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ordinal-access-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it('reads the rules and audited categories, and hands the rules to OrdinalModule', () => {
    const path = file(
      'ok.yaml',
      'rules:\n  - principal: group:billing\n    allow: [read]\n    categories: ["invoice-*"]\naudited: [employee]\n',
    );
    const config = loadConfig({ ORDINAL_ACCESS_RULES: path, ORDINAL_AUDIT: 'on' });
    expect(config.access).toEqual({
      rules: [{ principal: 'group:billing', allow: ['read'], categories: ['invoice-*'] }],
      auditedCategories: ['employee'],
      audit: true,
    });
    expect(ordinalOptionsFrom(config).access).toEqual({ rules: config.access.rules });
  });

  it('defaults to no rules and no audit trail', () => {
    expect(loadConfig({}).access).toEqual({ rules: [], auditedCategories: [], audit: false });
  });

  it('refuses a malformed rule, naming it, and an unknown ORDINAL_AUDIT', () => {
    const path = file('bad.yaml', 'rules:\n  - principal: someone\n    allow: [read]\n');
    expect(() => loadConfig({ ORDINAL_ACCESS_RULES: path })).toThrow(ConfigError);
    expect(() => loadConfig({ ORDINAL_ACCESS_RULES: path })).toThrow(/rules\[0\]\.principal/);
    expect(() => loadConfig({ ORDINAL_AUDIT: 'yes' })).toThrow(/ORDINAL_AUDIT/);
  });
});
