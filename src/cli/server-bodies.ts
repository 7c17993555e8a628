/**
 * What the CLI reads of the server's answers (the fields it prints; the server's response
 * DTOs in apps/eventstore describe them whole). A `--json` flag prints the body as it came.
 */

/** One projection or subscription of `GET /api/projections`. */
export interface ProjectionBody {
  name: string;
  kind: string;
  stream: string;
  position: number;
  lag: number | null;
  state: string;
  owner: unknown;
  lastError: string | null;
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
