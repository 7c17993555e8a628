import { OrdinalError } from '@ordinal/pg';

/**
 * Where the master key comes from: the key that wraps every subject's data key. The default
 * reads `ORDINAL_MASTER_KEY`; a KMS or a secrets manager plugs in by implementing this.
 */
export interface KeyProvider {
  /** The 32-byte AES-256 master key. Called once at start. */
  masterKey(): Promise<Buffer>;
}

/** Length of an AES-256 key in bytes. */
export const KEY_BYTES = 32;

/** Parses a base64 master key; throws naming the variable when it is not 32 bytes. */
export function parseMasterKey(text: string, name = 'ORDINAL_MASTER_KEY'): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== KEY_BYTES)
    throw new OrdinalError(
      'invalid_configuration',
      `${name} must be ${KEY_BYTES} random bytes in base64 (44 characters; make one with \`openssl rand -base64 32\`)`,
    );
  return key;
}

/** The master key from an environment variable (`ORDINAL_MASTER_KEY` by default). */
export class EnvKeyProvider implements KeyProvider {
  constructor(
    private readonly variable = 'ORDINAL_MASTER_KEY',
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** Whether the variable is set. */
  get configured(): boolean {
    return Boolean(this.env[this.variable]);
  }

  masterKey(): Promise<Buffer> {
    const text = this.env[this.variable];
    if (!text)
      return Promise.reject(
        new OrdinalError('invalid_configuration', `${this.variable} is not set`),
      );
    return Promise.resolve(parseMasterKey(text, this.variable));
  }
}

/** A fixed key (tests, or a provider that already holds the bytes). */
export class StaticKeyProvider implements KeyProvider {
  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES)
      throw new OrdinalError('invalid_configuration', `A master key is ${KEY_BYTES} bytes`);
  }

  masterKey(): Promise<Buffer> {
    return Promise.resolve(this.key);
  }
}
