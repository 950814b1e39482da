// Three Services on one account with loopback receivers (a bot, an agent desk, an observer on
// standby) and the calls the switchboard tests make, against one node or several: each call
// goes to the next node in turn.
import { expect } from 'chai';
import pg from 'pg';
import type { AccountData, CreatedServiceData } from './factories.ts';
import { client, type Answer } from './http.ts';
import { outboxRows } from './outbox.ts';
import { Receiver, type Received } from './receiver.ts';
import { sharedServer } from './server.ts';
import { Widget } from './widget.ts';

export interface Cluster {
  urls: string[];
  token: string;
  /** The Service's outbox rows in the order they were written. */
  outbox(serviceId: number): Promise<Array<{ id: string; state: string }>>;
  /** Runs SQL on the database (a test moving an offer's expiry into the past). */
  execute(sql: string, params: unknown[]): Promise<void>;
}

export function sharedCluster(token: string): Cluster {
  const server = sharedServer();
  return {
    urls: [server.url],
    token,
    outbox: (serviceId) => outboxRows({ serviceId }),
    async execute(sql, params) {
      await server.deps.db.orm.em.fork().getConnection().execute(sql, params);
    },
  };
}

/** Nodes as separate processes on one PostgreSQL database, read directly for the outbox. */
export function nodesCluster(urls: string[], token: string, databaseUrl: string): Cluster {
  const query = async <T extends object>(sql: string, params: unknown[]): Promise<T[]> => {
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      return (await db.query<T>(sql, params)).rows;
    } finally {
      await db.end();
    }
  };
  return {
    urls,
    token,
    outbox: (serviceId) =>
      query<{ id: string; state: string }>('select id, state from deliveries where service_id = $1 order by seq', [serviceId]),
    async execute(sql, params) {
      let n = 0;
      await query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      );
    },
  };
}

export interface Party {
  service: CreatedServiceData;
  receiver: Receiver;
}

export class Switchboard {
  private turn = 0;
  widget!: Widget;
  userId = 0;

  private constructor(
    readonly cluster: Cluster,
    readonly account: AccountData,
    readonly bot: Party,
    readonly desk: Party,
    readonly observer: Party,
  ) {}

  /** The account, the bot (its default Service), the desk, the observer (standby: all), and a visitor. */
  static async start(cluster: Cluster): Promise<Switchboard> {
    const api = client(cluster.urls[0] as string);
    const made = await api.post<AccountData>('/adminApi/accounts', { token: cluster.token, json: { name: 'Switchboard' } });
    expect(made.status, made.text).to.equal(201);
    const account = made.body.data;
    const party = async (name: string): Promise<Party> => {
      const receiver = await Receiver.start();
      const answer = await api.post<CreatedServiceData>(`/adminApi/accounts/${account.id}/services`, {
        token: cluster.token,
        json: { name, webhookUrl: `${receiver.url}/hook` },
      });
      expect(answer.status, answer.text).to.equal(201);
      return { service: answer.body.data, receiver };
    };
    const board = new Switchboard(cluster, account, await party('Bot'), await party('Agent desk'), await party('Observer'));
    const standby = await board.admin('PATCH', `/adminApi/services/${board.observer.service.id}`, { standby: 'all' });
    expect(standby.status, standby.text).to.equal(200);
    board.widget = new Widget(account, undefined, undefined, '', board.next());
    board.userId = (await board.widget.register()).body.data.userId;
    return board;
  }

  /** The next node's URL, in turn. */
  next(): string {
    const url = this.cluster.urls[this.turn % this.cluster.urls.length] as string;
    this.turn += 1;
    return url;
  }

  admin<T = unknown>(method: 'GET' | 'PATCH' | 'PUT', path: string, json?: unknown): Promise<Answer<T>> {
    const api = client(this.next());
    const verb = method.toLowerCase() as 'get' | 'patch' | 'put';
    return api[verb]<T>(path, { token: this.cluster.token, ...(json === undefined ? {} : { json }) });
  }

  as(party: Party) {
    return {
      post: <T = unknown>(path: string, json: unknown = {}) => client(this.next()).post<T>(path, { token: party.service.apiKey, json }),
      get: <T = unknown>(path: string) => client(this.next()).get<T>(path, { token: party.service.apiKey }),
    };
  }

  /** The visitor says something, through the next node. */
  async say(text: string): Promise<void> {
    const widget = new Widget(this.account, this.widget.deviceId, undefined, '', this.next());
    const answer = await widget.send(text);
    expect(answer.status, answer.text).to.equal(200);
  }

  /**
   * Exactly `count` payloads reached the party, one per outbox row, all delivered, in order:
   * waits for them, then until no row of the Service is pending, and fails on anything more.
   */
  async received(party: Party, count: number): Promise<unknown[]> {
    let rows: Array<{ id: string; state: string }> = [];
    const requests: Received[] = await party.receiver.exactly(count, async () => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        rows = await this.cluster.outbox(party.service.id);
        if (rows.every((row) => row.state !== 'pending')) break;
        if (Date.now() > deadline) throw new Error(`${party.service.name} still has pending deliveries`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    });
    expect(
      rows.map((row) => row.state),
      `${party.service.name}'s outbox`,
    ).to.deep.equal(requests.map(() => 'delivered'));
    expect(requests.map((r) => String(r.headers['webhook-id'])).sort(), 'one request per row').to.deep.equal(
      rows.map((row) => row.id).sort(),
    );
    return requests.map((r) => r.json);
  }

  /** Runs `use` on a new switchboard of the cluster, whose receivers are closed however it ends. */
  static async run(cluster: Cluster, use: (board: Switchboard) => Promise<void>): Promise<void> {
    const board = await Switchboard.start(cluster);
    try {
      await use(board);
    } finally {
      await board.close();
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.bot, this.desk, this.observer].map((party) => party.receiver.close()));
  }
}

/** A Service as payloads name it. */
export function ref(party: Party, isDefault = false) {
  return { name: party.service.name, identification: party.service.identification, default: isDefault };
}
