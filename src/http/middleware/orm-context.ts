import type { AsyncLocalStorage } from 'node:async_hooks';
import { RequestContext, type EntityManager } from '@mikro-orm/core';
import type { Middleware } from 'koa';
import type { AppContextExtras, AppState } from '../types.ts';

/**
 * A request's forks of the ORM, each made the first time the request's code asks for it
 * (MikroORM reads the context's map with get()). Requests on the hot path never do: the Service
 * API's answers and the Client API's messages are written by group commits on forks of their own
 * (server.ts), their callers read from caches or with statements of their own. A fork is a fresh
 * unit of work, identity map, entity factory and loader: made and collected for nothing there.
 */
class ForksOnDemand extends Map<string, EntityManager> {
  private forking = false;

  constructor(private readonly root: EntityManager) {
    super();
  }

  override get(name: string): EntityManager | undefined {
    const made = super.get(name);
    if (made || name !== this.root.name || this.forking) return made;
    // As RequestContext.create() forks, before the context exists: a new EntityManager asks for
    // its context while it is built, and is told there is none yet (not asked to fork again).
    this.forking = true;
    try {
      const fork = this.root.fork({ useContext: true, disableContextResolution: true });
      this.set(name, fork);
      return fork;
    } finally {
      this.forking = false;
    }
  }
}

/**
 * MikroORM's context store, where `em.getContext()` looks. RequestContext.create() forks at
 * once, and its way to be given a context of our own is private (the exact MikroORM version is
 * pinned in package.json; every test's request goes through here).
 */
const storage = (RequestContext as unknown as { storage: AsyncLocalStorage<RequestContext> }).storage;

/** Every request gets its own identity map, so no entity leaks between requests. */
export function ormContext(root: EntityManager): Middleware<AppState, AppContextExtras> {
  return (_ctx, next) => storage.run(new RequestContext(new ForksOnDemand(root)), next);
}
