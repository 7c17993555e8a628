import type { Command } from '../command.js';
import { deadLettersListCommand, deadLettersRedriveCommand } from './dead-letters.command.js';
import { interfacesListCommand, interfacesRewindCommand } from './interfaces.command.js';
import { migrateCommand } from './migrate.command.js';
import { projectionsListCommand, projectionsRebuildCommand } from './projections.command.js';
import { publishCommand } from './publish.command.js';
import { statusCommand } from './status.command.js';
import { tailCommand } from './tail.command.js';
import { tokenCommand } from './token.command.js';

/** Every subcommand, in the order `ordinal --help` lists them. */
export const COMMANDS: Command[] = [
  statusCommand,
  tailCommand,
  publishCommand,
  projectionsListCommand,
  projectionsRebuildCommand,
  interfacesListCommand,
  interfacesRewindCommand,
  deadLettersListCommand,
  deadLettersRedriveCommand,
  migrateCommand,
  tokenCommand,
];
