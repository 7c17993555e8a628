import type { Command } from '../command.js';
import { deadLettersListCommand, deadLettersRedriveCommand } from './dead-letters.command.js';
import { interfacesListCommand, interfacesRewindCommand } from './interfaces.command.js';
import {
  groupsDefineCommand,
  groupsDeleteCommand,
  groupsParkedCommand,
  groupsStatusCommand,
} from './groups.command.js';
import { migrateCommand } from './migrate.command.js';
import {
  segmentsArchiveCommand,
  segmentsListCommand,
  segmentsRestoreCommand,
  segmentsVerifyCommand,
} from './segments.command.js';
import { projectionsListCommand, projectionsRebuildCommand } from './projections.command.js';
import {
  projectionsPromoteCommand,
  projectionsRetireCommand,
  projectionsRollbackCommand,
} from './projection-versions.command.js';
import { publishCommand } from './publish.command.js';
import { statusCommand } from './status.command.js';
import { tailCommand } from './tail.command.js';
import { tokenCommand } from './token.command.js';
import { tenantsDeleteCommand } from './tenants.command.js';
import {
  erasuresReapplyCommand,
  redactCommand,
  subjectsEraseCommand,
} from './personal-data.command.js';
import {
  scavengeCommand,
  streamsDeleteCommand,
  streamsMetadataCommand,
  streamsScavengeCommand,
} from './streams.command.js';

/** Every subcommand, in the order `ordinal --help` lists them. */
export const COMMANDS: Command[] = [
  statusCommand,
  tailCommand,
  publishCommand,
  projectionsListCommand,
  projectionsRebuildCommand,
  projectionsPromoteCommand,
  projectionsRollbackCommand,
  projectionsRetireCommand,
  interfacesListCommand,
  interfacesRewindCommand,
  deadLettersListCommand,
  deadLettersRedriveCommand,
  streamsDeleteCommand,
  streamsMetadataCommand,
  streamsScavengeCommand,
  scavengeCommand,
  segmentsListCommand,
  segmentsArchiveCommand,
  segmentsRestoreCommand,
  segmentsVerifyCommand,
  groupsStatusCommand,
  groupsDefineCommand,
  groupsDeleteCommand,
  groupsParkedCommand,
  subjectsEraseCommand,
  erasuresReapplyCommand,
  redactCommand,
  tenantsDeleteCommand,
  migrateCommand,
  tokenCommand,
];
