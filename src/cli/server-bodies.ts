/**
 * What the CLI reads of the server's answers (the fields it prints; the server's response
 * DTOs in apps/eventstore describe them whole). A `--json` flag prints the body as it came.
 */
import type { SegmentsResponse, TenantDeletion } from '@ordinal/client';

/** One projection or subscription of `GET /api/projections`. */
export interface ProjectionBody {
  name: string;
  kind: string;
  stream: string;
  position: number;
  lag: number | null;
  state: string;
  owner: unknown;
  /** The other live processes that registered it (absent from servers before they were reported). */
  standbys?: unknown[];
  lastError: string | null;
  /** A build of a versioned projection: its projection, version, build and state. */
  projection?: string;
  version?: number;
  build?: number;
  versionState?: string;
  /** GET of one projection: who serves reads, and every build. */
  servingVersion?: number;
  servingPosition?: number;
  versions?: VersionBody[];
}

/** One build of a projection version. */
export interface VersionBody {
  version: number;
  build: number;
  state: string;
  position: number;
  lag: number;
  running: boolean;
}

/** `POST /api/projections/:name/versions/:v/retire`. */
export interface RetiredBody {
  dropped: string[];
}

/** `GET /api/projections`. */
export interface ProjectionsBody {
  projections: ProjectionBody[];
  watermark: {
    ordering: string;
    position: number;
    heldHole: {
      from: number;
      to: number;
      heldMs: number;
      writers: number;
      oldestWriter: { pid: number; applicationName: string } | null;
    } | null;
  };
}

/** `POST /api/projections/:name/rebuild`. */
export interface RebuildBody {
  head: number;
  /** Blue/green: the builds, the new one a `candidate`. */
  versions?: VersionBody[];
}

/** One push interface of `GET /api/interfaces`. */
export interface InterfaceBody {
  name: string;
  type: string;
  bookmark: number | null;
  position: number | null;
  lag: number | null;
  state: string;
  lastError: string | null;
}

/** `GET /api/interfaces`. */
export interface InterfacesBody {
  amqp: boolean;
  broker: string | null;
  interfaces: InterfaceBody[];
}

/** `POST /api/interfaces/:name/rewind`. */
export interface RewindBody {
  name: string;
  bookmark: number;
}

/** `GET /api/dead-letters`. */
export interface DeadLettersBody {
  queue: string;
  count: number;
  messages: {
    messageType: string | null;
    userId: string | null;
    body: string;
    death: { reason: string | null; time: string | null } | null;
  }[];
}

/** `POST /api/dead-letters/redrive`. */
export interface RedriveBody {
  from: string;
  to: string;
  moved: number;
}

/** One scavenge run (`POST /api/admin/scavenge`, `GET /api/admin/scavenge`). */
export interface ScavengeRunBody {
  id: number;
  status: string;
  startedAt: string;
  finishedAt: string | null;
  through: number;
  position: number;
  rowsErased: number;
  bytesFreed: number;
  tableBytesBefore: number | null;
  tableBytesAfter: number | null;
}

/** `GET /api/admin/segments`. */
export type SegmentsBody = SegmentsResponse;

/** One segment, as archive and restore answer. */
export type SegmentBody = SegmentsResponse['segments'][number];

/** `POST /api/admin/segments/:firstIndex/verify`. */
export interface SegmentVerificationBody {
  firstIndex: number;
  ok: boolean;
  rows: number;
  chunks: { file: string; ok: boolean; error?: string }[];
}

/** `GET /api/admin/scavenge`. */
export interface ScavengeBody {
  running: ScavengeRunBody | null;
  runs: ScavengeRunBody[];
}

/** `GET|PUT /api/streams/:id/metadata`. */
export interface StreamMetadataBody {
  streamId: string;
  metadataVersion: number;
  maxAge?: number;
  maxCount?: number;
  truncateBefore?: number;
  custom?: Record<string, unknown>;
}

/** `POST /api/subjects/:id/erase`. */
export interface ErasureBody {
  subjectHash: string;
  erasedAt: string;
  reason: string;
  markerIndex: number | null;
  alreadyErased: boolean;
}

/** `POST /api/erasures/reapply`. */
export interface ReapplyBody {
  subjects: number;
  /** Deleted tenants whose keys were destroyed again (absent from servers before tenants). */
  tenants?: number;
}

/** `DELETE /api/admin/tenants/:tenant` (the contract's shape). */
export type TenantDeletionBody = TenantDeletion;

/** `POST /api/admin/redact`. */
export interface RedactBody {
  messageTypes: string[];
  through: number;
  scanned: number;
  rewritten: number;
  rewrittenErased: number;
  alreadySealed: number;
  unredactable: number;
  unredactableRows: { index: number; reason: string }[];
  verification: { clearRows: number; clearIndices: number[]; verified: boolean };
}
