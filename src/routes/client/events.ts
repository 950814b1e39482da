import { sendEvent } from '../../chat/events.ts';
import { respond } from '../../http/envelope.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import { conversation } from './auth.ts';
import { EVENT_NAMES, eventParams } from './schema.ts';

export function eventRoutes(router: AppRouter): void {
  router.post('/services/event/:name', limitWrites(), async (ctx) => {
    const name = EVENT_NAMES[parseParams(ctx, eventParams).name];
    const { account, user } = conversation(ctx);
    await sendEvent(ctx.deps.db.orm.em, account, user, name);
    if (name === 'startTyping') ctx.deps.typing.started(user.id);
    if (name === 'stopTyping') ctx.deps.typing.stopped(user.id);
    respond(ctx, { data: {} });
  });
}
