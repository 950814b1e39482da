// A delivery this node holds under a lease (lease.ts), with what sending it needs: claimed here
// or handed over by the commit that wrote it (handoff.ts); and giving claims back unattempted.
import type { EntityManager } from '@mikro-orm/postgresql';
import { prepared } from '../db/prepared.ts';
import { claimDueSql, type ClaimDueRow, type ClaimDueValues } from './sql/claim-due.ts';
import { postponeDeliverySql } from './sql/postpone-delivery.ts';
import { releaseClaimsSql } from './sql/release-claims.ts';

export type { ClaimedBase, ClaimedDelivery, ClaimedEmail, ClaimedPush, ClaimedWebhook } from './claimed.ts';
import type { ClaimedDelivery } from './claimed.ts';

/**
 * Claims due deliveries: pending, ready (the head of their chain, so a later delivery never
 * overtakes an earlier one in flight or waiting for a retry), due, not leased, to an enabled
 * Service with a webhook, to a device, or (an email) to a user. Walks the ready index in due
 * order and stops at the batch size. Rows are locked with SKIP LOCKED and leased; a node that
 * dies mid-attempt loses the lease when it runs out.
 */
export async function claimDue(em: EntityManager, limits: ClaimDueValues): Promise<ClaimedDelivery[]> {
  // One statement, atomic on its own: no BEGIN/COMMIT round trips around it.
  return prepared<ClaimDueRow>(em, claimDueSql(limits));
}

/** Gives back claims this node will not attempt (stopping, or held too long): due again at once, the attempt not counted. */
export async function releaseClaims(em: EntityManager, node: string, ids: string[]): Promise<void> {
  await prepared(em, releaseClaimsSql({ node, ids }));
}

/**
 * An email whose customer is connected: asked again at `at`, the attempt not counted (it was
 * not one), so that waiting for a customer who keeps the page open never uses up the retries.
 */
export async function postpone(em: EntityManager, node: string, id: string, at: Date, reason: string): Promise<void> {
  await prepared(em, postponeDeliverySql({ node, id, at, reason }));
}
