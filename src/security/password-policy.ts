// What a new operator password must be: long enough, and not one everybody tries first.
import { dictionary } from '@zxcvbn-ts/language-common';
import { z } from 'zod';

/** The shortest new password accepted (NIST SP 800-63B: length and a blocklist, no composition rules). */
export const MIN_PASSWORD_LENGTH = 12;

let common: Set<string> | undefined;

/**
 * Whether the password is one of the ~49,000 most common passwords of breach corpora, as shipped
 * by @zxcvbn-ts/language-common (decompressed on first use), compared case-insensitively.
 */
export function isCommonPassword(password: string): boolean {
  common ??= new Set(dictionary['passwords-common'].map((p) => String(p).toLowerCase()));
  return common.has(password.normalize('NFKC').toLowerCase());
}

/** A password an operator chooses (created, changed or reset): every rule names its field in a 422. */
export const newPassword = z
  .string()
  .max(1024)
  .superRefine((password, ctx) => {
    // One reason at a time, the first one to fix.
    if ([...password].length < MIN_PASSWORD_LENGTH) {
      ctx.addIssue({ code: 'custom', message: `must be at least ${MIN_PASSWORD_LENGTH} characters` });
    } else if (isCommonPassword(password)) {
      ctx.addIssue({ code: 'custom', message: 'is one of the most common passwords; choose another' });
    }
  });
