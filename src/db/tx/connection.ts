// A pooled pg connection taken from knex's pool for a held transaction (held.ts), and a
// statement sent on it.

/** The parts of knex's client and of a pooled pg connection used here. */
export interface Pool {
  acquireConnection(): Promise<Connection>;
  releaseConnection(connection: Connection): Promise<unknown>;
}

export interface Connection {
  query(config: unknown, callback: (err: Error | null, result?: { rows: unknown[] }) => void): unknown;
  /** Set by knex when the connection failed: the pool drops it instead of handing it out again. */
  __knex__disposed?: unknown;
}

export function send(connection: Connection, config: unknown): Promise<{ rows: unknown[] }> {
  return new Promise((resolve, reject) => {
    connection.query(config, (err, result) => (err ? reject(err) : resolve(result ?? { rows: [] })));
  });
}
