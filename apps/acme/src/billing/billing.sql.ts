/** A parameterised statement, run with `manager.query(text, values)`. */
export interface SqlQuery {
  text: string;
  values: unknown[];
}

/** Billing's own tables: the indices it has processed, and the charges. */
export function createBillingTables(): SqlQuery {
  return {
    text: `CREATE TABLE IF NOT EXISTS billing_processed (event_index bigint PRIMARY KEY);
           CREATE TABLE IF NOT EXISTS billing_charges (
             event_index bigint PRIMARY KEY REFERENCES billing_processed (event_index),
             customer text,
             amount numeric NOT NULL
           )`,
    values: [],
  };
}

/** Claims an index; no row back means it was processed before (a duplicate). */
export function claimIndex(index: number): SqlQuery {
  return {
    text: 'INSERT INTO billing_processed (event_index) VALUES ($1) ON CONFLICT DO NOTHING RETURNING event_index',
    values: [index],
  };
}

/** Records the charge of an order, in the claim's transaction. */
export function insertCharge(index: number, customer: string | null, amount: number): SqlQuery {
  return {
    text: 'INSERT INTO billing_charges (event_index, customer, amount) VALUES ($1, $2, $3)',
    values: [index, customer, amount],
  };
}
