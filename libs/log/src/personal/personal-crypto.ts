import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { KEY_BYTES } from './key-provider.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Version byte of every box, so the format can change without guessing. */
const FORMAT = 1;

/**
 * The key store's and the log's name for a subject: SHA-256 of its id (as text), hex. The
 * erasure ledger keeps only this, never the id.
 */
export function subjectHash(subjectId: string): string {
  return createHash('sha256').update(subjectId, 'utf8').digest('hex');
}

/** A new random data key. */
export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/**
 * AES-256-GCM of `plain` under `key`, bound to `context` (additional authenticated data: a box
 * moved to another subject or field does not open): `version | iv | tag | ciphertext`.
 */
export function seal(key: Buffer, plain: Buffer, context: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([Buffer.of(FORMAT), iv, cipher.getAuthTag(), body]);
}

/** Opens a `seal` box; throws when the key or the context is not the sealing one (GCM refuses). */
export function open(key: Buffer, box: Buffer, context: string): Buffer {
  if (box.length < 1 + IV_BYTES + TAG_BYTES || box[0] !== FORMAT)
    throw new Error('Not a sealed value of a known format');
  const iv = box.subarray(1, 1 + IV_BYTES);
  const tag = box.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(box.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
}

/** The context of a message's sealed fields: the subject and the pointers. */
export const fieldContext = (subject: string, pointers: string) => `fields:${subject}:${pointers}`;
/** A data key's context: its subject. */
export const keyContext = (subject: string) => `key:${subject}`;
/** The context of the key store's master-key check value. */
export const CHECK_CONTEXT = 'ordinal-master-key-check';
