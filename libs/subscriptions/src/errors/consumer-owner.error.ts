import { OrdinalError } from '@ordinal/pg';

/**
 * A typed error the process that owns a consumer raised while running an operation asked of it
 * (rebuild, replay, resume): its code and message as that process raised them, so that it is
 * answered as it would be in-process (a refused rebuild is `projection_version_conflict`).
 */
export class ConsumerOwnerError extends OrdinalError {
  constructor(
    readonly consumer: string,
    readonly command: string,
    code: OrdinalError['code'],
    message: string,
  ) {
    super(code, message);
  }
}
