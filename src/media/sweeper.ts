// Deletes uploads that no message refers to once they are older than
// media.unreferencedTtlSeconds (an hour by default): the row, then the file. Never sooner than
// the upload quota window (config.ts holds it so): the quotas per conversation and device count
// these rows (conversations/media.ts). Every node sweeps on its own timer;
// rows are taken with FOR UPDATE SKIP LOCKED, so nodes sweeping at once take different rows
// and none waits. A message written with an upload holds it FOR SHARE
// (conversations/media.ts), so the sweeper skips it, and the references are checked again by
// the delete itself, in a fresh snapshot, so a message committed meanwhile keeps its upload.
// An upload can only be referred to in its own conversation (and a login merge moves uploads
// with messages), so references are looked for in the messages of the upload's user: in
// messages.media and in the carousel items of messages.content.
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgUuidArray } from '../db/pg-arrays.ts';
import type { Logger } from '../logger.ts';
import { Sweeper } from '../sweeper.ts';
import type { MediaStorage } from './storage.ts';

const UNREFERENCED = `not exists (
  select 1 from messages msg
  where msg.user_id = m.user_id
    and (msg.media->>'path' = m.path
      or msg.content @> jsonb_build_object('carousel', jsonb_build_array(jsonb_build_object('media', jsonb_build_object('path', m.path)))))
)`;

interface Swept {
  rows: Array<{ accountId: number; path: string }>;
  more: boolean;
}

export interface SweepOptions {
  unreferencedTtlSeconds: number;
  batchSize?: number;
}

/** One pass: every unreferenced upload past the age, in batches. Returns how many were deleted. */
export async function sweepUnreferencedMedia(
  em: () => EntityManager,
  storage: MediaStorage,
  options: SweepOptions,
  logger?: Logger,
): Promise<number> {
  const batchSize = options.batchSize ?? 500;
  let total = 0;
  for (;;) {
    const gone = await em().transactional(async (tx): Promise<Swept> => {
      const connection = tx.getConnection();
      const candidates = await connection.execute<Array<{ id: string }>>(
        `select m.id from media m
          where m.created_at < now() - (? * interval '1 second') and ${UNREFERENCED}
          order by m.created_at
          limit ?
          for update of m skip locked`,
        [options.unreferencedTtlSeconds, batchSize],
        'all',
        tx.getTransactionContext(),
      );
      if (candidates.length === 0) return { rows: [], more: false };
      const rows = await connection.execute<Array<{ accountId: number; path: string }>>(
        `delete from media m where m.id = any(?::uuid[]) and ${UNREFERENCED}
         returning m.account_id as "accountId", m.path`,
        [pgUuidArray(candidates.map((c) => c.id))],
        'all',
        tx.getTransactionContext(),
      );
      return { rows, more: candidates.length === batchSize };
    });
    // Files after the rows are gone for good: a crash in between leaves a file, never a row without one.
    for (const row of gone.rows) {
      await storage
        .delete(row.accountId, row.path)
        .catch((err: unknown) => logger?.warn({ err, path: row.path }, 'swept upload file not deleted'));
    }
    total += gone.rows.length;
    if (!gone.more) return total;
  }
}

/** The sweeper of one node: a pass every interval (the first one interval after start). */
export class MediaSweeper extends Sweeper {
  constructor(em: () => EntityManager, storage: MediaStorage, options: SweepOptions & { intervalSeconds: number }, logger: Logger) {
    super(() => sweepUnreferencedMedia(em, storage, options, logger), options.intervalSeconds, logger, {
      swept: 'unreferenced uploads swept',
      failed: 'upload sweep failed',
    });
  }
}
