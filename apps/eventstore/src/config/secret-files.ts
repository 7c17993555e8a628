import { readFileSync } from 'node:fs';

/**
 * The settings that hold secrets. Each may instead name a file holding it with `<NAME>_FILE`
 * (Docker and Kubernetes secrets mount them as files): `DATABASE_URL_FILE=/run/secrets/db`.
 */
export const SECRET_SETTINGS = [
  'ORDINAL_TOKENS',
  'DATABASE_URL',
  'AMQP_URL',
  'PGPASSWORD',
  'ORDINAL_MASTER_KEY',
  'ORDINAL_KEYSTORE_URL',
] as const;

type Env = Record<string, string | undefined>;

/** A `<NAME>_FILE` setting that cannot be used. The message names the setting and what to change. */
export class SecretFileError extends Error {}

/**
 * The environment with every `<NAME>_FILE` of SECRET_SETTINGS read into `<NAME>`: the file's
 * content without its trailing line breaks (editors and `echo` add one). Setting both `<NAME>`
 * and `<NAME>_FILE` is refused, as is a file that cannot be read; the error names the setting
 * and the path, never the content.
 */
export function withSecretFiles(
  env: Env,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): Env {
  const resolved: Env = { ...env };
  for (const name of SECRET_SETTINGS) {
    const path = env[`${name}_FILE`];
    if (path === undefined || path === '') continue;
    if (env[name] !== undefined && env[name] !== '')
      throw new SecretFileError(`Set ${name} or ${name}_FILE, not both`);
    let content: string;
    try {
      content = readFile(path);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new SecretFileError(
        `${name}_FILE names '${path}', which cannot be read${typeof code === 'string' ? ` (${code})` : ''}: mount the secret there or correct the path`,
      );
    }
    resolved[name] = content.replace(/[\r\n]+$/, '');
  }
  return resolved;
}
