import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  randomFillSync,
} from 'node:crypto';
import { KEY_BYTES } from './key-provider.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Version byte of every box, so the format can change without guessing. */
const FORMAT = 1;

/**
 * The key store's and the log's name for a subject: SHA-256 of its id (as text), hex. The
 * erasure ledger keeps only this, never the id.
 */
export function subjectHash(subjectId: string, tenant?: string | null): string {
  if (tenant != null) return tenantSubjectHash(tenant, subjectId);
  return createHash('sha256').update(subjectId, 'utf8').digest('hex');
}

/**
 * A tenant's subject's name (docs/tenants.md#deleting-a-tenant): its own, apart from the same id
 * in another tenant or in no tenant. Qualified like every other name of a tenant,
 * `<tenant>/<SHA-256 hex of "<tenant>/<id>">`: the key store tells a tenant's keys by it (its
 * `tenant` column), an untenanted subject's name (64 hex digits) never holds a `/`, and the same
 * id in two tenants hashes apart.
 */
export function tenantSubjectHash(tenant: string, subjectId: string): string {
  return `${tenant}/${createHash('sha256').update(`${tenant}/${subjectId}`, 'utf8').digest('hex')}`;
}

/** A new random data key. */
export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** `count` new random data keys, from one draw of the CSPRNG (a draw per key cost more than the key's wrapping). */
export function newDataKeys(count: number): Buffer[] {
  const bytes = randomBytes(KEY_BYTES * count);
  return Array.from({ length: count }, (_, i) =>
    Buffer.from(bytes.subarray(i * KEY_BYTES, (i + 1) * KEY_BYTES)),
  );
}

/**
 * IVs are taken from a buffer of random bytes filled 4,096 IVs at a time: `randomBytes(12)`
 * per box cost as much as the encryption itself. Each IV is used once (the pool is refilled,
 * never reread) and comes from the same CSPRNG, so a box's IV is as unpredictable as before.
 */
const IV_POOL_BYTES = IV_BYTES * 4096;
const ivPool = Buffer.allocUnsafe(IV_POOL_BYTES);
let ivPoolUsed = IV_POOL_BYTES;

/**
 * AES-256-GCM of `plain` under `key`, bound to `context` (additional authenticated data: a box
 * moved to another subject or field does not open): `version | iv | tag | ciphertext`.
 */
export function seal(key: Buffer, plain: Buffer, context: string): Buffer {
  if (ivPoolUsed === IV_POOL_BYTES) {
    randomFillSync(ivPool);
    ivPoolUsed = 0;
  }
  const head = 1 + IV_BYTES + TAG_BYTES;
  const box = Buffer.allocUnsafe(head + plain.length);
  box[0] = FORMAT;
  ivPool.copy(box, 1, ivPoolUsed, (ivPoolUsed += IV_BYTES));
  const cipher = createCipheriv('aes-256-gcm', key, box.subarray(1, 1 + IV_BYTES));
  cipher.setAAD(Buffer.from(context, 'utf8'));
  // GCM is a stream mode: the ciphertext is as long as the plain text, final() adds nothing.
  const written = cipher.update(plain).copy(box, head);
  if (written + cipher.final().copy(box, head + written) !== plain.length)
    throw new Error('AES-256-GCM gave a ciphertext of another length than its plain text');
  cipher.getAuthTag().copy(box, 1 + IV_BYTES);
  return box;
}

/**
 * Opens a `seal` box; throws when the key or the context is not the sealing one (GCM refuses).
 * `context` may be given as its UTF-8 bytes (a reader opening many boxes of one subject makes
 * them once).
 */
export function open(key: Buffer, box: Buffer, context: string | Buffer): Buffer {
  if (box.length < 1 + IV_BYTES + TAG_BYTES || box[0] !== FORMAT)
    throw new Error('Not a sealed value of a known format');
  const iv = box.subarray(1, 1 + IV_BYTES);
  const tag = box.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(typeof context === 'string' ? Buffer.from(context, 'utf8') : context);
  decipher.setAuthTag(tag);
  const head = decipher.update(box.subarray(1 + IV_BYTES + TAG_BYTES));
  // GCM's final() checks the tag and gives nothing more: no copy of the whole in the common case.
  const tail = decipher.final();
  return tail.length === 0 ? head : Buffer.concat([head, tail]);
}

/**
 * Boxes as the log stores them (base64) are decoded here before `open`: a reader opens one per
 * message, and decoding into this buffer (its bytes are copied into the cipher before the next
 * box) spares an allocation each. Larger boxes get one of their own.
 */
const scratch = Buffer.allocUnsafe(4096);

/** `open` of a box given in base64, as the `personal` column holds it. */
export function openBase64(key: Buffer, sealed: string, context: string | Buffer): Buffer {
  // base64 holds 3 bytes in 4 characters: what fits is known before decoding.
  if (sealed.length > (scratch.length / 3) * 4)
    return open(key, Buffer.from(sealed, 'base64'), context);
  return open(key, scratch.subarray(0, scratch.write(sealed, 'base64')), context);
}

/** The context of a message's sealed fields: the subject and the pointers. */
export const fieldContext = (subject: string, pointers: string) => `fields:${subject}:${pointers}`;
/** A data key's context: its subject. */
export const keyContext = (subject: string) => `key:${subject}`;
/** The context of the key store's master-key check value. */
export const CHECK_CONTEXT = 'ordinal-master-key-check';
