// The audit log (docs/security.md): who changed what through the Admin API or the CLI, and
// every sign-in step. An account-scoped audit:read shows that account's entries; held
// everywhere, every entry (sign-ins and operator changes name no account).
import { Readable } from 'node:stream';
import { eachAudit, listAudit, type AuditFilter } from '../../audit/log.ts';
import type { AppContext } from '../../http/types.ts';
import { presentAuditEntry } from '../../presenters/audit.ts';
import { respondPage } from './keyset-page.ts';
import { authorizeListing } from './operator-access.ts';
import { rule } from './policy.ts';
import { route, type AdminRoute } from './route.ts';
import { auditFilterQuery, auditQuery } from './schema.ts';

function filterOf(ctx: AppContext, query: ReturnType<typeof auditFilterQuery.parse>): AuditFilter {
  return {
    readable: authorizeListing(ctx),
    accountId: query.accountId,
    operatorId: query.operatorId,
    action: query.action,
    since: query.since ? new Date(query.since) : undefined,
    until: query.until ? new Date(query.until) : undefined,
  };
}

export const auditRoutes: AdminRoute[] = [
  route({
    method: 'GET',
    path: '/audit',
    rule: rule('listing', 'audit:read'),
    summary: 'The audit log, newest first: filtered by account, operator, action and time; keyset pages (paging.before)',
    query: auditQuery,
    handler: async (ctx, { query }) => {
      const filter = filterOf(ctx, query);
      const rows = await listAudit(ctx.deps.db.orm.em, filter, query.limit, query.before);
      respondPage(ctx, rows, query.limit, presentAuditEntry, (entry) => entry.id);
    },
  }),
  route({
    method: 'GET',
    path: '/audit/export',
    rule: rule('listing', 'audit:read'),
    summary: 'The audit log with the same filters as JSON lines (application/x-ndjson), newest first, streamed',
    query: auditFilterQuery,
    produces: 'application/x-ndjson',
    handler: (ctx, { query }) => {
      const filter = filterOf(ctx, query);
      // A fork of its own: the stream outlives the request's ORM context.
      const em = ctx.deps.db.orm.em.fork();
      async function* lines() {
        for await (const entry of eachAudit(em, filter)) yield `${JSON.stringify(presentAuditEntry(entry))}\n`;
      }
      ctx.set('content-type', 'application/x-ndjson; charset=utf-8');
      ctx.set('content-disposition', 'attachment; filename="palaver-audit.ndjson"');
      ctx.set('cache-control', 'no-store');
      ctx.body = Readable.from(lines());
    },
  }),
];
