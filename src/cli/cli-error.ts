/** Exit codes of the `ordinal` command (docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** The server (or the database, or the broker) answered with an error. */
  failed: 1,
  /** Wrong arguments: the message says what to type. */
  usage: 2,
  /** Nothing answers at ORDINAL_URL (or the database at DATABASE_URL). */
  unreachable: 3,
  /** 401: no token, or a token the server does not know. */
  unauthorized: 4,
  /** 403: the token lacks the scope the command needs. */
  forbidden: 5,
} as const;

/** A failure the command reports as one line on stderr, exiting with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Wrong arguments: reported with the command's usage line. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
    this.name = 'UsageError';
  }
}
