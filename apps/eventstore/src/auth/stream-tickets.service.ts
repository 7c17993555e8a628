import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import type { ApiToken } from './api-token.js';

/** A ticket as issued. */
export interface IssuedTicket {
  ticket: string;
  expiresAt: string;
  expiresInMs: number;
}

const b64 = (buffer: Buffer) => buffer.toString('base64url');

/**
 * Short-lived, single-use tickets that let a browser's `EventSource` (which cannot send an
 * `Authorization` header) open the stream with `?ticket=` instead of a long-lived token in the
 * URL. A ticket is `<payload>.<HMAC-SHA256>`: the payload names the token it was issued for,
 * its expiry and a nonce. The key is derived from the configured token secrets, so every
 * server process with the same ORDINAL_TOKENS accepts it and none needs shared state; a
 * ticket is used once per process (its nonce is remembered until it expires).
 */
@Injectable()
export class StreamTickets {
  private readonly key: Buffer;
  private readonly ttlMs: number;
  private readonly tokens: Map<string, ApiToken>;
  private readonly used = new Map<string, number>();

  constructor(@Inject(ORDINAL_CONFIG) config: OrdinalConfig) {
    const secrets = config.tokens
      .map((t) => `${t.name}:${t.secret}`)
      .sort()
      .join('\n');
    this.key = createHmac('sha256', 'ordinal stream tickets').update(secrets).digest();
    this.ttlMs = config.streamTicketTtlMs;
    this.tokens = new Map(config.tokens.map((t) => [t.name, t]));
  }

  /** A ticket for the stream, on behalf of `token`. */
  issue(token: ApiToken): IssuedTicket {
    const expires = Date.now() + this.ttlMs;
    const payload = b64(
      Buffer.from(JSON.stringify({ t: token.name, e: expires, n: b64(randomBytes(12)) })),
    );
    return {
      ticket: `${payload}.${this.sign(payload)}`,
      expiresAt: new Date(expires).toISOString(),
      expiresInMs: this.ttlMs,
    };
  }

  /** The token a ticket stands for, once; null for a forged, expired or used ticket. */
  redeem(ticket: string): ApiToken | null {
    const now = Date.now();
    for (const [nonce, expires] of this.used) if (expires <= now) this.used.delete(nonce);
    const [payload, signature, extra] = ticket.split('.');
    if (!payload || !signature || extra !== undefined) return null;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let claims: { t?: unknown; e?: unknown; n?: unknown };
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof claims;
    } catch {
      return null;
    }
    if (
      typeof claims.e !== 'number' ||
      claims.e <= now ||
      typeof claims.n !== 'string' ||
      typeof claims.t !== 'string'
    )
      return null;
    if (this.used.has(claims.n)) return null;
    this.used.set(claims.n, claims.e);
    return this.tokens.get(claims.t) ?? null;
  }

  private sign(payload: string): string {
    return b64(createHmac('sha256', this.key).update(payload).digest());
  }
}
