import { OrdinalError } from '@ordinal/pg';

/** A message names a subject whose personal data was erased: nothing was stored. */
export class SubjectErasedError extends OrdinalError {
  constructor(
    readonly messageType: string,
    readonly pointer: string,
  ) {
    super(
      'subject_erased',
      `Message '${messageType}': the subject at ${pointer} was erased (docs/personal-data.md); its personal data is never stored again: use a new identity`,
    );
  }
}

/** A personal-data rule that cannot be used as given. */
export class InvalidPersonalDataRuleError extends OrdinalError {
  constructor(message: string) {
    super('invalid_personal_data_rule', message);
  }
}

/**
 * The master key does not open the key store's keys (AES-GCM refused it): another key than the
 * one the store was made with. Nothing is decrypted into garbage; fix ORDINAL_MASTER_KEY (or the
 * key provider) and restart.
 */
export class MasterKeyMismatchError extends OrdinalError {
  constructor(options?: { cause?: unknown }) {
    super(
      'master_key_mismatch',
      'The master key does not open the personal-data key store (AES-GCM authentication failed): it is not the key the store was made with; set the right ORDINAL_MASTER_KEY (or key provider) and restart',
      options,
    );
  }
}

/** A redaction asked for a message type that has no personal-data rule. */
export class NoPersonalDataRuleError extends OrdinalError {
  constructor(readonly messageType: string) {
    super(
      'no_personal_data_rule',
      `Message type ${messageType} has no personal-data rule, so nothing of it is personal data to redact; set one first (PUT /api/personal-data/rules/${messageType})`,
    );
  }
}

/** A redaction is already running (this process or another holds its lock). */
export class RedactionRunningError extends OrdinalError {
  constructor() {
    super(
      'redact_running',
      'A redaction of legacy personal data is already running; wait for its answer, then run it again if it reported rows left in clear',
    );
  }
}
