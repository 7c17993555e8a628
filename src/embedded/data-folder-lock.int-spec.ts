import { lockDataFolder } from './data-folder-lock.js';

describe('lockDataFolder', () => {
  it('holds a folder for one holder at a time, tells a contender its pid, and frees it on release', async () => {
    // Given a folder locked once
    const folder = `/tmp/ordinal-lock-spec-${process.pid}-${Date.now()}`;
    const first = await lockDataFolder(folder);
    expect('lock' in first).toBe(true);
    // When it is locked again, Then the contender is told who holds it
    expect(await lockDataFolder(folder)).toEqual({ holder: { pid: process.pid } });
    // And another folder is free
    const other = await lockDataFolder(`${folder}-other`);
    expect('lock' in other).toBe(true);
    // When the holder releases it, Then it can be taken again
    if ('lock' in first) await first.lock.release();
    const again = await lockDataFolder(folder);
    expect('lock' in again).toBe(true);
    if ('lock' in again) await again.lock.release();
    if ('lock' in other) await other.lock.release();
  });
});
