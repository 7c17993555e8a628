import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DatabaseUnavailableError, execute, isConnectionError } from '@ordinal/pg';
import { isTenantId } from '@ordinal/log';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { SCOPES, type Scope } from './api-token.js';
import type { Principal } from './principal.js';
import { tokenPrincipal } from './request-authenticator.js';
import { claimStreamTicket, purgeStreamTickets } from './sql/claim-stream-ticket.sql.js';

/** A ticket as issued. */
export interface IssuedTicket {
  ticket: string;
  expiresAt: string;
  expiresInMs: number;
}

/** What a ticket's signed payload says. */
interface TicketClaims {
  /** The token's name, or the JWT principal's subject. */
  t: string;
  /** A JWT principal's scopes and groups (absent for a static token, whose are looked up). */
  s?: Scope[];
  g?: string[];
  /**
   * The tenant the ticket acts for (the request's that got it: the principal's own, or the one a
   * trusted principal named; docs/tenants.md). Absent: none.
   */
  te?: string;
  /** Expiry, epoch ms. */
  e: number;
  /** A random nonce: the ticket's identity, claimed once. */
  n: string;
}

/**
 * How long a used nonce is kept after its ticket expired: a process whose clock is behind the
 * others' by less than this still finds the nonce when it is shown the ticket late.
 */
const CLOCK_SKEW_MARGIN_MS = 60_000;

const b64 = (buffer: Buffer) => buffer.toString('base64url');

/**
 * Short-lived, single-use tickets that let a browser's `EventSource` (which cannot send an
 * `Authorization` header) open the stream with `?ticket=` instead of a long-lived token in the
 * URL. A ticket is `<payload>.<HMAC-SHA256>`: the payload names the token it was issued for
 * (a JWT principal's: its subject, scopes and groups, and it expires no later than the JWT),
 * its expiry and a nonce. The key is derived from the configured token secrets and
 * ORDINAL_STREAM_TICKET_SECRET, so every server process with the same ones accepts it (with
 * neither, a random key: tickets work on the issuing process only). It is used once across all of them
 * and across restarts: redeeming claims its nonce in PostgreSQL (`stream_ticket_nonces`), and
 * only the first claim wins. A replica reader cannot write to its database: it claims in its
 * own memory (single-use per replica-reader process), which docs/reading.md says.
 */
@Injectable()
export class StreamTickets {
  private readonly key: Buffer;
  private readonly ttlMs: number;
  private readonly tokens: Map<string, Principal>;
  private readonly inDatabase: boolean;
  /** A replica reader's claims (nonce → expiry). */
  private readonly used = new Map<string, number>();
  private nextPurgeAt = 0;

  constructor(
    @Inject(ORDINAL_CONFIG) config: OrdinalConfig,
    private readonly dataSource: DataSource,
  ) {
    const secrets = config.tokens
      .map((t) => `${t.name}:${t.secret}`)
      .sort()
      .join('\n');
    const shared = `${secrets}\n${config.streamTicketSecret ?? ''}`;
    this.key =
      shared.trim() === ''
        ? randomBytes(32)
        : createHmac('sha256', 'ordinal stream tickets').update(shared).digest();
    this.ttlMs = config.streamTicketTtlMs;
    this.tokens = new Map(config.tokens.map((t) => [t.name, tokenPrincipal(t)]));
    this.inDatabase = config.role === 'primary';
  }

  /**
   * A ticket for the stream, on behalf of `principal`, with its rights and no more; bound to
   * `tenant` (the request's tenant) when one is given: its stream shows that tenant's messages
   * only, as the request that got it would have.
   */
  issue(principal: Principal, tenant?: string): IssuedTicket {
    const now = Date.now();
    const expires = Math.min(now + this.ttlMs, principal.expiresAt ?? Infinity);
    const claims: TicketClaims = { t: principal.name, e: expires, n: b64(randomBytes(12)) };
    if (principal.kind === 'jwt') {
      claims.s = [...principal.scopes];
      claims.g = [...principal.groups];
    }
    if (tenant !== undefined) claims.te = tenant;
    const payload = b64(Buffer.from(JSON.stringify(claims)));
    return {
      ticket: `${payload}.${this.sign(payload)}`,
      expiresAt: new Date(expires).toISOString(),
      expiresInMs: Math.max(0, expires - now),
    };
  }

  /**
   * The principal a ticket stands for, once across every process on the database; null for a
   * forged, expired or used ticket. DatabaseUnavailableError when the claim cannot be recorded.
   */
  async redeem(ticket: string): Promise<Principal | null> {
    const claims = this.verify(ticket);
    const principal = claims && this.principalOf(claims);
    if (!claims || !principal) return null;
    return (await this.claim(claims)) ? principal : null;
  }

  private principalOf(claims: TicketClaims): Principal | null {
    const tenant = claims.te;
    if (tenant !== undefined && !isTenantId(tenant)) return null;
    if (claims.s === undefined) {
      const token = this.tokens.get(claims.t);
      // A token bound to a tenant is never issued a ticket for another one.
      if (!token || (token.tenant !== undefined && tenant !== undefined && tenant !== token.tenant))
        return null;
      return tenant === undefined ? token : { ...token, tenant };
    }
    return {
      kind: 'jwt',
      name: claims.t,
      scopes: new Set(claims.s.filter((s) => SCOPES.includes(s))),
      groups: claims.g ?? [],
      expiresAt: claims.e,
      ...(tenant === undefined ? {} : { tenant }),
    };
  }

  /** The ticket's claims when its signature holds and it has not expired. */
  private verify(ticket: string): TicketClaims | null {
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
      claims.e <= Date.now() ||
      typeof claims.n !== 'string' ||
      typeof claims.t !== 'string'
    )
      return null;
    return claims as TicketClaims;
  }

  /** Records the ticket's nonce as used; false when it already was. */
  private async claim(claims: TicketClaims): Promise<boolean> {
    const now = Date.now();
    if (!this.inDatabase) {
      for (const [nonce, expires] of this.used) if (expires <= now) this.used.delete(nonce);
      if (this.used.has(claims.n)) return false;
      this.used.set(claims.n, claims.e);
      return true;
    }
    try {
      // The table holds a ticket life's worth of nonces: a delete on its expiry index at most
      // once per ticket life keeps it that small.
      if (now >= this.nextPurgeAt) {
        this.nextPurgeAt = now + this.ttlMs;
        await execute(this.dataSource.manager, purgeStreamTickets(now - CLOCK_SKEW_MARGIN_MS));
      }
      const rows = await execute(this.dataSource.manager, claimStreamTicket(claims.n, claims.e));
      return rows.length === 1;
    } catch (error) {
      if (isConnectionError(error))
        throw new DatabaseUnavailableError(
          `The stream ticket could not be checked: the database is unavailable (${(error as Error).message}); retry later`,
          false,
          { cause: error },
        );
      throw error;
    }
  }

  private sign(payload: string): string {
    return b64(createHmac('sha256', this.key).update(payload).digest());
  }
}
