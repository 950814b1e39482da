// A Service's delivery numbers (GET /adminApi/services/{id}/delivery-stats) and the log's time
// and user filters. The Service is switched off, so nothing is sent; the rows are then put into
// their states, and attempts logged in their minutes, directly: the only way to place them an
// exact number of minutes ago.
import { expect } from 'chai';
import { enqueueCommitted } from './support/deliveries.ts';
import { adminToken, createAccount, createService } from './support/factories.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';

interface Stats {
  pending: number;
  dead: number;
  delivered: number;
  lastHour: Array<{ minute: string; delivered: number; failed: number }>;
}

const MINUTE = 60_000;

describe('Admin API: delivery stats and log filters', () => {
  const api = () => client(sharedServer().url);
  /** A Service with a webhook (deliveries are written for it), switched off (none is sent). */
  async function quietService() {
    const account = await createAccount();
    const service = await createService(account.id, { webhookUrl: 'https://hooks.example.com/palaver' });
    const off = await api().patch(`/adminApi/services/${service.id}`, { token: await adminToken(), json: { enabled: false } });
    expect(off.status, off.text).to.equal(200);
    return service;
  }
  const sql = (text: string, params: unknown[]) => sharedServer().deps.db.orm.em.fork().getConnection().execute(text, params, 'run');

  it('counts each state and the last hour per minute, exactly', async () => {
    const service = await quietService();
    const ids: string[] = [];
    for (let n = 0; n < 9; n += 1) ids.push(...(await enqueueCommitted(sharedServer(), { recipients: [service.id] })));
    expect(ids).to.have.length(9);
    // Whole minutes of the server's clock, well inside the hour whichever minute the query runs in.
    const now = Date.now();
    const at = (minutesAgo: number) => new Date(Math.floor((now - minutesAgo * MINUTE) / MINUTE) * MINUTE + 5_000);
    const [d1, d2, d3, x1, x2, old, deadOld] = ids;
    for (const id of [d1, d2, d3, old])
      await sql(`update deliveries set state = 'delivered', delivered_at = now(), ready = false where id = ?`, [id]);
    for (const id of [x1, deadOld]) await sql(`update deliveries set state = 'dead', ready = false where id = ?`, [id]);
    // x2 is still pending: its failed attempt is to be retried.
    for (const [id, outcome, when] of [
      [d1, 'delivered', at(5)],
      [d2, 'delivered', at(5)],
      [d3, 'delivered', at(20)],
      [old, 'delivered', at(90)],
      [x1, 'dead', at(5)],
      [x2, 'retry', at(30)],
      [deadOld, 'dead', at(120)],
    ] as const) {
      await sql(
        `insert into delivery_attempts (delivery_id, service_id, attempt, started_at, duration_ms, outcome, node)
         values (?, ?, 1, ?, 3, ?, 'test')`,
        [id, service.id, when, outcome],
      );
    }
    const answer = await api().get<Stats>(`/adminApi/services/${service.id}/delivery-stats`, { token: await adminToken() });
    expect(answer.status, answer.text).to.equal(200);
    const stats = answer.body.data;
    expect({ pending: stats.pending, dead: stats.dead, delivered: stats.delivered }).to.deep.equal({ pending: 3, dead: 2, delivered: 4 });
    expect(stats.lastHour).to.have.length(60);
    for (const [n, m] of stats.lastHour.entries()) {
      expect(Date.parse(m.minute) % MINUTE, m.minute).to.equal(0);
      if (n > 0) expect(Date.parse(m.minute) - Date.parse(stats.lastHour[n - 1]?.minute ?? '')).to.equal(MINUTE);
    }
    const busy = stats.lastHour.filter((m) => m.delivered > 0 || m.failed > 0);
    const minuteOf = (d: Date) => new Date(Math.floor(d.getTime() / MINUTE) * MINUTE).toISOString();
    expect(busy).to.deep.equal([
      { minute: minuteOf(at(30)), delivered: 0, failed: 1 },
      { minute: minuteOf(at(20)), delivered: 1, failed: 0 },
      { minute: minuteOf(at(5)), delivered: 2, failed: 1 },
    ]);
  });

  it('filters the log by creation time and by user', async () => {
    const service = await quietService();
    const [early, middle, late, otherUser] = [
      ...(await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 7001 })),
      ...(await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 7001 })),
      ...(await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 7001 })),
      ...(await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 7002 })),
    ];
    const times: Array<[string | undefined, string]> = [
      [early, '2026-01-01T10:00:00Z'],
      [middle, '2026-01-01T11:00:00Z'],
      [late, '2026-01-01T12:00:00Z'],
      [otherUser, '2026-01-01T11:30:00Z'],
    ];
    for (const [id, when] of times) await sql(`update deliveries set created_at = ? where id = ?`, [when, id]);
    const token = await adminToken();
    const log = async (query: string) => {
      const answer = await api().get<Array<{ id: string }>>(`/adminApi/services/${service.id}/deliveries?${query}`, { token });
      expect(answer.status, answer.text).to.equal(200);
      return answer.body.data.map((d) => d.id);
    };
    expect(await log('since=2026-01-01T11:00:00Z')).to.deep.equal([otherUser, late, middle]);
    expect(await log('until=2026-01-01T11:00:00Z')).to.deep.equal([early]);
    expect(await log('since=2026-01-01T10:30:00Z&until=2026-01-01T12:00:00Z&userId=7001')).to.deep.equal([middle]);
    expect(await log('userId=7002')).to.deep.equal([otherUser]);

    const bad = await api().get(`/adminApi/services/${service.id}/deliveries?since=yesterday&userId=x`, { token });
    expect(bad.status).to.equal(422);
    expect(bad.body.notifications.map((n) => n.field)).to.have.members(['query.since', 'query.userId']);
    const backwards = await api().get(`/adminApi/services/${service.id}/deliveries?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z`, {
      token,
    });
    expect(backwards.status).to.equal(422);
    expect(backwards.body.notifications.map((n) => n.field)).to.deep.equal(['query.until']);
  });
});
