import { createHash } from 'node:crypto';

/** SHA-256 (hex) of the body's JSON text: what the duplicate window compares (L7). */
export function contentHash(bodyJson: string): string {
  return createHash('sha256').update(bodyJson).digest('hex');
}
