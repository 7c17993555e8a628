import { closesDatabase } from './full-disk-guard.js';

describe('which errors close the embedded database', () => {
  it('closes it on a PANIC and on running out of a resource, but not for a table that could not grow', () => {
    const wal = 'could not write to file "pg_wal/xlogtemp.42": No space left on device';
    expect(closesDatabase({ code: '53100', message: wal, severity: 'PANIC' })).toBe(true);
    expect(closesDatabase({ code: '53100', message: wal, severity: 'ERROR' })).toBe(true);
    expect(closesDatabase({ code: '53200', message: 'out of memory', severity: 'ERROR' })).toBe(
      true,
    );
    expect(
      closesDatabase({
        code: '53100',
        message: 'could not extend file "base/5/16384": No space left on device',
        severity: 'ERROR',
      }),
    ).toBe(false);
    expect(closesDatabase({ code: '53300', message: 'too many clients', severity: 'FATAL' })).toBe(
      false,
    );
    expect(closesDatabase({ code: '23505', message: 'duplicate key', severity: 'ERROR' })).toBe(
      false,
    );
    expect(closesDatabase({ code: '3D000', message: 'no such database', severity: 'FATAL' })).toBe(
      false,
    );
  });
});
