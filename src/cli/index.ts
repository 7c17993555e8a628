export { cli } from './cli.js';
export { EXIT, CliError, UsageError } from './cli-error.js';
export type { Terminal } from './terminal.js';
