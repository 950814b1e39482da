// The transcript a customer asked for (outbox.ts): one email delivery, due now, in the user's
// chain of emails (ordering key `key`, the negated user id).
import { named, type Sql } from '../../db/named.ts';

export interface InsertTranscriptValues {
  id: string;
  userId: number;
  key: number;
  payload: string;
}

/** No rows. */
export function insertTranscriptSql({ id, userId, key, payload }: InsertTranscriptValues): Sql {
  return named(
    `insert into deliveries (id, user_id, ordering_key, kind, payload, ready, next_attempt_at)
     values (:id, :userId, :key, 'email', :payload,
             not exists (select 1 from deliveries e where coalesce(e.service_id, 0) = 0 and e.ordering_key = :key and e.state = 'pending'),
             now())`,
    { id, userId, key, payload },
  );
}
