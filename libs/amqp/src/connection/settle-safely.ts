/**
 * Acks, nacks and rejects on a channel that may have closed a moment ago (broker outage,
 * connection closed from the broker's side): amqplib then throws synchronously
 * ("Channel closed"), often from a timer where nothing would catch it and the process would
 * die. Nothing is lost by skipping it: the broker redelivers every unacknowledged delivery once
 * the consumer is back. Returns whether the operation went out.
 */
export function settleSafely(operation: () => void): boolean {
  try {
    operation();
    return true;
  } catch (error) {
    if (
      error instanceof Error &&
      /channel (closed|ended)|IllegalOperation/i.test(`${error.name} ${error.message}`)
    )
      return false;
    throw error;
  }
}
