// What an account's chat widget asks and says besides the conversation (docs/widget.md): the
// pre-chat form (which contact fields, before or after the first message), the business hours
// and the usual reply time. Kept in the account's settings document; operators change them
// through PATCH /adminApi/accounts/{id}, the widget reads them (with the hours' state now)
// through the Client API's GET /chat-settings, Services through GET /account/hours.
import { z } from 'zod';
import type { Account } from '../db/entities/index.ts';
import { businessHoursInput, replyTimeInput, type BusinessHours } from './business-hours.ts';

export const PRECHAT_FIELDS = ['none', 'email', 'name_email'] as const;
export type PrechatFields = (typeof PRECHAT_FIELDS)[number];

export interface PrechatForm {
  /** The contact fields asked: none, the email address, or the name and the email address. */
  fields: PrechatFields;
  /**
   * `before`: the visitor fills the form before their first message (required). `after`: the
   * widget asks once the first message is sent ("Leave your email and we will answer there"),
   * and the visitor may skip it.
   */
  timing: 'before' | 'after';
}

export const NO_PRECHAT: PrechatForm = { fields: 'none', timing: 'after' };

export const prechatFormInput = z
  .object({
    fields: z.enum(PRECHAT_FIELDS),
    timing: z.enum(['before', 'after']).default('after'),
  })
  .strict();

/** The Admin API's fields for these settings (PATCH /accounts/{id}); null clears hours and the reply time. */
export const chatSettingsChanges = {
  prechatForm: prechatFormInput.optional(),
  businessHours: businessHoursInput.nullable().optional(),
  replyTimeMinutes: replyTimeInput.nullable().optional(),
};

export interface ChatSettings {
  prechatForm: PrechatForm;
  businessHours: BusinessHours | null;
  replyTimeMinutes: number | null;
}

export function chatSettingsOf(account: Pick<Account, 'settings'>): ChatSettings {
  const s = account.settings;
  return {
    prechatForm: (s.prechatForm as PrechatForm | undefined) ?? NO_PRECHAT,
    businessHours: (s.businessHours as BusinessHours | undefined) ?? null,
    replyTimeMinutes: (s.replyTimeMinutes as number | undefined) ?? null,
  };
}
