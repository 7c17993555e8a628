import { hash } from 'node:crypto';

/**
 * SHA-256 (hex) of the body's JSON text: what the duplicate window compares. The
 * one-shot `crypto.hash` costs a fraction of a `createHash` object on the request path.
 */
export function contentHash(bodyJson: string): string {
  return hash('sha256', bodyJson, 'hex');
}
