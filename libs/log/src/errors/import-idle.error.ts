import { OrdinalError } from '@ordinal/pg';

/**
 * A bulk import's input sent nothing for its idle timeout (the client paused mid-file): the
 * import is rolled back, nothing stored, so the writers it held resume.
 */
export class ImportIdleError extends OrdinalError {
  constructor(
    readonly idleMs: number,
    readonly lines: number,
  ) {
    super(
      'import_idle_timeout',
      `The import's input sent nothing for ${idleMs} ms after line ${lines}; nothing was stored. Send the file without pauses (other writers wait while an import runs), or in parts`,
    );
  }
}
