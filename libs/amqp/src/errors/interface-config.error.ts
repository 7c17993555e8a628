import { OrdinalError } from '@ordinal/pg';

/** The push-interface configuration is malformed; the message names the entry and the field. */
export class InterfaceConfigError extends OrdinalError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('interface_config', message, options);
  }
}
