// The secrets a webhook is signed with: the Service's current one, and during a rotation's
// grace period the rotated-out one too (tenancy/services.ts sets when it ends). The rule is
// this SQL, read wherever a Service's secrets are read for sending: claims, hand-offs,
// promotions and the dashboard's test event.
import type { EntityManager } from '@mikro-orm/postgresql';
import { named } from '../db/named.ts';

/** The rotated-out secret of the services row `alias` while its grace period lasts, else null. */
export function previousSecretSql(alias: string): string {
  return `case when ${alias}.previous_secret_expires_at > now() then ${alias}.previous_signing_secret end`;
}

/** What a request is signed with: the current secret first (a receiver accepts any signature it can verify). */
export function secretsOf(service: { signingSecret: string; previousSigningSecret: string | null }): string[] {
  return service.previousSigningSecret ? [service.signingSecret, service.previousSigningSecret] : [service.signingSecret];
}

/** A Service's secrets now, for a request outside the outbox (the test event). */
export async function serviceSecrets(em: EntityManager, serviceId: number): Promise<string[]> {
  const { sql, params } = named(
    `select s.signing_secret as "signingSecret", ${previousSecretSql('s')} as "previousSigningSecret"
       from services s where s.id = :serviceId`,
    { serviceId },
  );
  const [row] = await em.getConnection().execute<Array<{ signingSecret: string; previousSigningSecret: string | null }>>(sql, params);
  if (!row) throw new Error(`no Service ${serviceId}`);
  return secretsOf(row);
}
