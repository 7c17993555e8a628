import { OrdinalHttpError } from '@ordinal/client';
import { CliError, EXIT } from './cli-error.js';

/** The underlying cause's code of a failed fetch (ECONNREFUSED, ENOTFOUND, …), if any. */
function networkCode(error: unknown): string | null {
  let e: unknown = error;
  for (let depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * Turns what the client threw into one clear line and an exit code: the server unreachable,
 * a 401 or 403 with what to do, or the server's own message.
 */
export function explainError(error: unknown, baseUrl: string): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof OrdinalHttpError) {
    const body = error.body as { message?: string; code?: string } | undefined;
    const detail = typeof body?.message === 'string' ? body.message : error.message;
    if (error.status === 401)
      return new CliError(
        `The server at ${baseUrl} refused the token (401: ${detail}). Set ORDINAL_TOKEN or pass --token`,
        EXIT.unauthorized,
      );
    if (error.status === 403 && body?.code === 'access_denied')
      return new CliError(
        `An access rule of the server refuses this (403: ${detail}). Ask an operator for a rule that allows it (ORDINAL_ACCESS_RULES on the server)`,
        EXIT.forbidden,
      );
    if (error.status === 403 && body?.code === 'tenant_forbidden')
      return new CliError(
        `The token may not act for this tenant here (403: ${detail}). Use the tenant's own token, or a token with the tenants scope and no tenant (ORDINAL_TOKENS on the server); leave out --tenant (ORDINAL_TENANT) for a route that is not per tenant`,
        EXIT.forbidden,
      );
    if (error.status === 403)
      return new CliError(
        `The token lacks the scope this needs (403: ${detail}). Use a token with that scope (ORDINAL_TOKENS on the server)`,
        EXIT.forbidden,
      );
    return new CliError(`The server answered ${error.status}: ${detail}`, EXIT.failed);
  }
  const code = networkCode(error);
  if (
    error instanceof TypeError ||
    (code &&
      /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EHOSTUNREACH|ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT|UND_ERR_SOCKET)$/.test(
        code,
      ))
  ) {
    return new CliError(
      `Cannot reach the Ordinal server at ${baseUrl}${code ? ` (${code})` : ''}. Is it running? Set ORDINAL_URL or pass --url`,
      EXIT.unreachable,
    );
  }
  return new CliError((error as Error)?.message ?? String(error), EXIT.failed);
}
