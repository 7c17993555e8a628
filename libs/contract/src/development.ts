/**
 * The development token: every development server (`ORDINAL_ENV=development`, the default)
 * accepts it with every scope, and a production server refuses to start with it. The CLI
 * uses it when no token is set and the server is on this machine (docs/cli.md).
 */
export const DEVELOPMENT_TOKEN = 'dev-ordinal-token';
