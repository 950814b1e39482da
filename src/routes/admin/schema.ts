import { z } from 'zod';

export const loginBody = z.object({
  email: z.string().email(),
  password: z.string().min(1).max(1024),
});

export const accountIdParams = z.object({
  accountId: z.coerce.number().int().positive(),
});

export const createAccountBody = z.object({
  name: z.string().trim().min(1).max(255),
});

const webhookUrl = z
  .string()
  .url()
  .max(2048)
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL');

export const createServiceBody = z.object({
  name: z.string().trim().min(1).max(255),
  webhookUrl: webhookUrl.nullish(),
});
