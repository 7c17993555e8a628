#!/usr/bin/env node
// The `ordinal` command (docs/cli.md): the bin of @ordinal/nestjs.
import { cli } from './cli.js';
import { endQuietlyOnClosedPipes, processTerminal } from './terminal.js';

endQuietlyOnClosedPipes();
cli(process.argv.slice(2), processTerminal, process.env).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ordinal: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
