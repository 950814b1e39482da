import { sendClientEvent } from '../../commands/client/send-event.ts';
import { respond } from '../../http/respond.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import { conversation } from './client-identity.ts';
import { EVENT_NAMES, eventParams } from './schema.ts';

export function eventRoutes(router: AppRouter): void {
  router.post('/services/event/:name', limitWrites(), async (ctx) => {
    const name = EVENT_NAMES[parseParams(ctx, eventParams).name];
    await sendClientEvent({ em: () => ctx.deps.db.orm.em, typing: ctx.deps.typing }, conversation(ctx), name);
    respond(ctx, { data: {} });
  });
}
