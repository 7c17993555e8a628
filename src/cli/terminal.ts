/** Where a command writes: results to stdout, progress and errors to stderr. */
export interface Terminal {
  out: (text: string) => void;
  err: (text: string) => void;
  /** stderr is a terminal: progress redraws one line; otherwise it prints a line now and then. */
  interactive: boolean;
}

/** The process's own stdout and stderr. */
export const processTerminal: Terminal = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  interactive: Boolean(process.stderr.isTTY),
};
