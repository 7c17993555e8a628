import { CreateCheckpoints1765200000000 } from './1765200000000-create-checkpoints.js';
import { CreateParkedMessages1765200000001 } from './1765200000001-create-parked-messages.js';
import { ConsumerDirectory1765200000002 } from './1765200000002-consumer-directory.js';
import { SubscriptionsSchemaComments1765200000003 } from './1765200000003-schema-comments.js';
import { CreateConsumerGroups1765200000100 } from './1765200000100-create-consumer-groups.js';
import { ConsumerGroupsSchemaComments1765200000101 } from './1765200000101-consumer-groups-schema-comments.js';
import { ProjectionVersions1765200000200 } from './1765200000200-projection-versions.js';
import { GroupAckAfterLock1765200000300 } from './1765200000300-group-ack-after-lock.js';
import { GroupMemberEpochFloor1765200000350 } from './1765200000350-group-member-epoch-floor.js';
import { GroupClaimOneRoundTrip1765200000400 } from './1765200000400-group-claim-one-round-trip.js';
import { GroupAckFound1765200000410 } from './1765200000410-group-ack-found.js';
import { GroupClaimBoundedScans1765200000500 } from './1765200000500-group-claim-bounded-scans.js';
import { GroupDeliveriesCascadeByTrigger1765200000510 } from './1765200000510-group-deliveries-cascade-by-trigger.js';
import { GroupClaimExpiryByIndex1765200000520 } from './1765200000520-group-claim-expiry-by-index.js';
import { ConsumerRequestErrorCode1765200000530 } from './1765200000530-consumer-request-error-code.js';
import { GroupClaimHandsOnRead1765200000600 } from './1765200000600-group-claim-hands-on-read.js';
import { CheckpointLateOwedSince1765200000700 } from './1765200000700-checkpoint-late-owed-since.js';
import { ConsumerNotices1765200000800 } from './1765200000800-consumer-notices.js';
import { GroupHeldIndexDeadline1765200000900 } from './1765200000900-group-held-index-deadline.js';
import { GroupHandedBatches1765200001000 } from './1765200001000-group-handed-batches.js';

/** This library's migrations, in order. */
export const SUBSCRIPTIONS_MIGRATIONS = [
  CreateCheckpoints1765200000000,
  CreateParkedMessages1765200000001,
  ConsumerDirectory1765200000002,
  SubscriptionsSchemaComments1765200000003,
  CreateConsumerGroups1765200000100,
  ConsumerGroupsSchemaComments1765200000101,
  ProjectionVersions1765200000200,
  GroupAckAfterLock1765200000300,
  GroupMemberEpochFloor1765200000350,
  GroupClaimOneRoundTrip1765200000400,
  GroupAckFound1765200000410,
  GroupClaimBoundedScans1765200000500,
  GroupDeliveriesCascadeByTrigger1765200000510,
  GroupClaimExpiryByIndex1765200000520,
  ConsumerRequestErrorCode1765200000530,
  GroupClaimHandsOnRead1765200000600,
  CheckpointLateOwedSince1765200000700,
  ConsumerNotices1765200000800,
  GroupHeldIndexDeadline1765200000900,
  GroupHandedBatches1765200001000,
];
