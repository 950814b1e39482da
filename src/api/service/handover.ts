// The handover protocol on the Service API (docs/service-api.md, "The switchboard").
import { handoverState, handoverStep } from '../../conversations/handover.ts';
import type { HandoverStep } from '../../presenters/webhook-payloads.ts';
import { presentHandoverState } from '../../presenters/handover.ts';
import { presentServiceUser } from '../../presenters/service-user.ts';
import { respond } from '../../http/respond.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { getAccount } from '../../tenancy/accounts.ts';
import { getService } from '../../tenancy/services.ts';
import { serviceCaller } from './service-access.ts';
import { userForService } from './caller.ts';
import { acceptBody, offerBody, passBody, releaseBody, userIdParams } from './schema.ts';

const BODIES = { pass: passBody, offer: offerBody, accept: acceptBody, release: releaseBody } as const;

async function answer(ctx: AppContext, userId: number, changed: boolean | null) {
  const em = ctx.deps.db.orm.em.fork();
  const caller = serviceCaller(ctx);
  const user = await userForService(em, caller, userId);
  const owner = await getService(em, user.ownerServiceId);
  const { defaultServiceId } = await getAccount(em, caller.account.id);
  const state = presentHandoverState(await handoverState(em, user), defaultServiceId ?? null);
  respond(ctx, {
    data: { ...presentServiceUser(user, owner, defaultServiceId ?? null), handover: state, ...(changed === null ? {} : { changed }) },
  });
}

export function handoverRoutes(router: AppRouter): void {
  router.get('/users/:userId/handover', async (ctx) => {
    const { userId } = parseParams(ctx, userIdParams);
    await answer(ctx, userId, null);
  });

  for (const step of Object.keys(BODIES) as HandoverStep[]) {
    router.post(`/users/:userId/handover/${step}`, async (ctx) => {
      const body = parseBody(ctx, BODIES[step]);
      const { userId } = parseParams(ctx, userIdParams);
      const caller = serviceCaller(ctx);
      const user = await userForService(ctx.deps.db.orm.em, caller, userId);
      const result = await handoverStep(ctx.deps.db.orm.em, {
        account: caller.account,
        caller: caller.service,
        userId: user.id,
        step,
        targetIdentification: 'serviceIdentification' in body ? body.serviceIdentification : null,
        reason: body.reason ?? null,
        metadata: body.metadata ?? null,
        timeoutSeconds: 'timeoutSeconds' in body ? (body.timeoutSeconds ?? undefined) : undefined,
      });
      await answer(ctx, userId, result.changed);
    });
  }
}
