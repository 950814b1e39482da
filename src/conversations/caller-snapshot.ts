// A caller snapshot: the conversation as a caller opened it, that is the account, the device it is on and the device's user,
// read once per call (snapshots, never managed entities: changes go through the commands,
// which lock and read what they change themselves).
import type { Account, Device, User } from '../db/entities/index.ts';

export interface CallerSnapshot {
  readonly account: Readonly<Account>;
  readonly device: Readonly<Device>;
  readonly user: Readonly<User>;
}
