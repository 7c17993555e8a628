/** A command the order's current state does not allow (domain rule, not a storage error). */
export class OrderRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = OrderRuleError.name;
  }
}
