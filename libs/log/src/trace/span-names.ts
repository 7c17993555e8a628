/** The names of the spans Ordinal records (docs/observability.md lists their attributes). */
export const SPANS = {
  httpRequest: 'HTTP',
  append: 'ordinal.append',
  flush: 'ordinal.flush',
  projectionBatch: 'ordinal.projection.batch',
  subscriptionBatch: 'ordinal.subscription.batch',
  handle: 'ordinal.handle',
  interfacePublish: 'ordinal.interface.publish',
  amqpReceive: 'ordinal.amqp.receive',
} as const;

/** Attribute keys of Ordinal's own spans (OpenTelemetry semantic conventions where one fits). */
export const ATTRIBUTES = {
  correlationId: 'ordinal.correlation_id',
  appendMessages: 'ordinal.append.messages',
  streamId: 'ordinal.stream_id',
  flushBatchSize: 'ordinal.flush.batch_size',
  flushAppends: 'ordinal.flush.appends',
  flushMode: 'ordinal.flush.mode',
  flushCreated: 'ordinal.flush.created',
  consumerName: 'ordinal.consumer.name',
  consumerKind: 'ordinal.consumer.kind',
  fromPosition: 'ordinal.batch.from_position',
  toPosition: 'ordinal.batch.to_position',
  batchMessages: 'ordinal.batch.messages',
  messageIndex: 'ordinal.message.index',
  messageType: 'ordinal.message.type',
  interfaceName: 'ordinal.interface.name',
  messagingSystem: 'messaging.system',
  messagingDestination: 'messaging.destination.name',
  messagingBatchCount: 'messaging.batch.message_count',
} as const;
