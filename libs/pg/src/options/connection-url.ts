/**
 * Connection URLs (PostgreSQL's, the broker's) as operators write them: the one masking rule for
 * every log line and error that shows one, what is wrong with a URL that does not parse
 * (without quoting it), and a PostgreSQL URL from libpq's `PG*` settings.
 */

// The user part excludes < and >: a placeholder such as <user>:<password>@ in a hint is no credential.
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s'"`/@:<>]*):([^\s'"`]*)@/gi;
const PASSWORD_PARAMETER = /\b(password=)([^\s&'"`]*)/gi;

/**
 * `text` with the password of every URL in it (`scheme://user:password@…` → `scheme://user:***@…`)
 * and every `password=` parameter replaced by `***`. A password with characters a URL reserves
 * (`/`, `@`, `#`) is masked up to the last `@` of the URL, so nothing of it shows.
 */
export function maskCredentials(text: string): string {
  return text
    .replace(URL_CREDENTIALS, (_all, scheme: string, user: string) => `${scheme}${user}:***@`)
    .replace(PASSWORD_PARAMETER, '$1***');
}

/**
 * What is wrong with `raw` as a connection URL with one of `protocols` (`['postgres:',
 * 'postgresql:']`), or null when it is usable. `name` is the setting that gave it
 * (`DATABASE_URL`). The answer never contains the URL's password.
 */
export function connectionUrlProblem(
  raw: string,
  name: string,
  protocols: readonly string[],
): string | null {
  const example = `${protocols[0]}//<user>:<password>@<host>:<port>/<${protocols[0].startsWith('postgres') ? 'database' : 'vhost'}>`;
  const encode = `percent-encode them (encodeURIComponent: / is %2F, @ is %40, # is %23, ? is %3F, % is %25)`;
  const hasCredentials = /^[a-z][a-z0-9+.-]*:\/\/[^@]*@/i.test(raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    if (hasCredentials || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:[^@]*[/?#][^@]*@/i.test(raw))
      return `${name} is not a valid URL: its user or password has characters a URL reserves (/ ? # @ % [ ]); ${encode}, or leave the password out of the URL and set PGPASSWORD. The form is ${example}`;
    return `${name} is not a valid URL; the form is ${example}`;
  }
  if (!protocols.includes(url.protocol))
    return `${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}, got '${url.protocol}//'`;
  // A '#' or '?' in the password ends the host part early: the URL parses, but not as meant.
  if (raw.includes('@') && url.username === '' && url.password === '')
    return `${name} is not read as meant: the part before its last '@' holds a character a URL reserves (/ ? # @), so it was not taken for the user and password; ${encode}`;
  if (url.hash !== '')
    return `${name} has a '#', where a URL ends: if it is part of the password, ${encode}`;
  if (url.hostname === '') return `${name} names no host; the form is ${example}`;
  return null;
}

/** libpq's settings the server reads when DATABASE_URL is unset (PGHOST required). */
export const PG_ENVIRONMENT = ['PGHOST', 'PGPORT', 'PGUSER', 'PGPASSWORD', 'PGDATABASE'] as const;

/**
 * A `postgres://` URL from libpq-style settings, each part percent-encoded (a password may
 * hold any character): `PGHOST` (required, a host name or address), `PGPORT` (5432),
 * `PGUSER` (`postgres`), `PGPASSWORD` (none), `PGDATABASE` (`fallbackDatabase`). Null when
 * PGHOST is unset.
 */
export function urlFromPgEnvironment(
  env: Record<string, string | undefined>,
  fallbackDatabase: string,
): string | null {
  const host = env.PGHOST;
  if (!host) return null;
  const user = encodeURIComponent(env.PGUSER || 'postgres');
  const password = env.PGPASSWORD ? `:${encodeURIComponent(env.PGPASSWORD)}` : '';
  const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const database = encodeURIComponent(env.PGDATABASE || fallbackDatabase);
  return `postgres://${user}${password}@${hostPart}:${env.PGPORT || '5432'}/${database}`;
}

/**
 * `url` with `password` put in (percent-encoded) when it names none: DATABASE_URL without a
 * password plus PGPASSWORD, so a password never has to be written into a URL by hand.
 */
export function withPassword(url: string, password: string | undefined): string {
  if (!password) return url;
  const parsed = new URL(url);
  if (parsed.password !== '') return url;
  if (parsed.username === '') parsed.username = 'postgres';
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}
