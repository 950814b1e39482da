import { Migration } from '@mikro-orm/migrations';

/**
 * Offers that timed out are told to both Services once (conversations/handover.ts,
 * expireOffers): when that was delivered; a new offer or an owner change clears it. The index
 * holds only the few live offers not yet told, for the sweep that reads them every second.
 */
export class Migration20270120000000_offer_expiry extends Migration {
  override up(): void {
    this.addSql(`alter table conversation_handovers add column offer_expiry_told_at timestamptz null;`);
    this.addSql(
      `create index conversation_handovers_offer_expiry_index on conversation_handovers (offer_expires_at)
        where pending_service_id is not null and offer_expiry_told_at is null;`,
    );
  }
}
