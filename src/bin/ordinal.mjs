#!/usr/bin/env node
// The `ordinal` command (docs/cli.md). A committed file, so npm links the bin at install time
// even on a fresh clone that has not been built yet; the command itself is src/cli, built to dist.
import '../dist/cli/main.js';
