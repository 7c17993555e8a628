import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from 'jose';
import type { JwtConfig } from './jwt-config.js';

/**
 * The key resolver of the configured key set: jose's remote key set (cached for
 * `jwksMaxAgeMs`, re-read on an unknown `kid` at most every `jwksCooldownMs`), reading a
 * `file:` URL from disk instead of over HTTPS, with the same cache and refresh.
 */
export function jwksSource(config: JwtConfig): JWTVerifyGetKey {
  const file = config.jwksUrl.protocol === 'file:' ? fileURLToPath(config.jwksUrl) : null;
  return createRemoteJWKSet(config.jwksUrl, {
    cooldownDuration: config.jwksCooldownMs,
    cacheMaxAge: config.jwksMaxAgeMs,
    ...(file
      ? {
          [customFetch]: async () =>
            new Response(await readFile(file, 'utf8'), {
              status: 200,
              headers: { 'content-type': 'application/json' },
            }),
        }
      : {}),
  });
}
