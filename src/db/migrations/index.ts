import { Migration20261121000000_initial } from './Migration20261121000000_initial.ts';
import { Migration20261201000000_message_content } from './Migration20261201000000_message_content.ts';
import { Migration20261215000000_deliveries_read } from './Migration20261215000000_deliveries_read.ts';
import { Migration20261220000000_client_message_ids } from './Migration20261220000000_client_message_ids.ts';
import { Migration20261220000000_push } from './Migration20261220000000_push.ts';
import { Migration20261228000000_operator_disabled } from './Migration20261228000000_operator_disabled.ts';
import { Migration20261230000000_delivery_attempts } from './Migration20261230000000_delivery_attempts.ts';
import { Migration20261231000000_authorization_secret_rotation } from './Migration20261231000000_authorization_secret_rotation.ts';
import { Migration20270101000000_media_device } from './Migration20270101000000_media_device.ts';
import { Migration20270101000000_inbox } from './Migration20270101000000_inbox.ts';
import { Migration20270102000000_inbox_conversations } from './Migration20270102000000_inbox_conversations.ts';
import { Migration20270105000000_operator_accounts } from './Migration20270105000000_operator_accounts.ts';
import { Migration20270110000000_contact_email } from './Migration20270110000000_contact_email.ts';
import { Migration20270115000000_switchboard } from './Migration20270115000000_switchboard.ts';
import { Migration20270115000000_email_replies } from './Migration20270115000000_email_replies.ts';
import { Migration20270115000000_audit_log } from './Migration20270115000000_audit_log.ts';
import { Migration20270120000000_offer_expiry } from './Migration20270120000000_offer_expiry.ts';
import { Migration20270125000000_analysis_targets } from './Migration20270125000000_analysis_targets.ts';
import { Migration20270126000000_text_search_pending_list } from './Migration20270126000000_text_search_pending_list.ts';

/** Every migration in order, listed explicitly so PGlite and PostgreSQL run the very same set. */
export const migrationsList = [
  { name: 'Migration20261121000000_initial', class: Migration20261121000000_initial },
  { name: 'Migration20261201000000_message_content', class: Migration20261201000000_message_content },
  { name: 'Migration20261215000000_deliveries_read', class: Migration20261215000000_deliveries_read },
  { name: 'Migration20261220000000_client_message_ids', class: Migration20261220000000_client_message_ids },
  { name: 'Migration20261220000000_push', class: Migration20261220000000_push },
  { name: 'Migration20261228000000_operator_disabled', class: Migration20261228000000_operator_disabled },
  { name: 'Migration20261230000000_delivery_attempts', class: Migration20261230000000_delivery_attempts },
  { name: 'Migration20261231000000_authorization_secret_rotation', class: Migration20261231000000_authorization_secret_rotation },
  { name: 'Migration20270101000000_media_device', class: Migration20270101000000_media_device },
  { name: 'Migration20270101000000_inbox', class: Migration20270101000000_inbox },
  { name: 'Migration20270102000000_inbox_conversations', class: Migration20270102000000_inbox_conversations },
  { name: 'Migration20270105000000_operator_accounts', class: Migration20270105000000_operator_accounts },
  { name: 'Migration20270110000000_contact_email', class: Migration20270110000000_contact_email },
  { name: 'Migration20270115000000_switchboard', class: Migration20270115000000_switchboard },
  { name: 'Migration20270115000000_email_replies', class: Migration20270115000000_email_replies },
  { name: 'Migration20270115000000_audit_log', class: Migration20270115000000_audit_log },
  { name: 'Migration20270120000000_offer_expiry', class: Migration20270120000000_offer_expiry },
  { name: 'Migration20270125000000_analysis_targets', class: Migration20270125000000_analysis_targets },
  { name: 'Migration20270126000000_text_search_pending_list', class: Migration20270126000000_text_search_pending_list },
];
