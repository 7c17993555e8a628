// The streaming replica helper lives with the benchmarks (their tsconfig builds only test/bench); the suites use the same one.
export {
  startStreamingReplica,
  type StreamingReplica,
} from '../bench/support/streaming-replica.js';
