#!/usr/bin/env node
// After `tsc -b`: makes the built `ordinal` command executable (tsc writes files 0644, and
// npm links the bin at install time, before a fresh clone has built it), so `npx ordinal` runs.
import { chmodSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'dist', 'cli', 'main.js');
if (existsSync(bin)) chmodSync(bin, 0o755);
