/** Where a command writes: results to stdout, progress and errors to stderr. */
export interface Terminal {
  out: (text: string) => void;
  err: (text: string) => void;
  /** stderr is a terminal: progress redraws one line; otherwise it prints a line now and then. */
  interactive: boolean;
}

/**
 * A reader that went away is the end of the output, not a failure of the command:
 * `ordinal tail --from 1 | head -1` once head has its line. EPIPE on stdout ends the process at
 * once with status 0 (what a pipeline into head expects, `set -o pipefail` included) and
 * nothing on stderr; EPIPE on stderr drops progress and errors, and the command goes on. Any
 * other error of either stream stays fatal, as it was.
 */
function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream, onClosed: () => void): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    onClosed();
  });
}

/** The process's own stdout and stderr (every command's output goes through them). */
export const processTerminal: Terminal = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  interactive: Boolean(process.stderr.isTTY),
};

/** Installs the closed-pipe handling on the process's streams (the `ordinal` command's entry). */
export function endQuietlyOnClosedPipes(): void {
  endQuietlyOnClosedPipe(process.stdout, () => process.exit(0));
  endQuietlyOnClosedPipe(process.stderr, () => undefined);
}
