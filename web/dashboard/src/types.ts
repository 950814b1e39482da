// What the Admin API answers, as the dashboard reads it (src/presenters/*); the shapes the server
// declares for the dashboard too are src/contracts/'s.
import type { Grant } from '../../../src/contracts/permissions.ts';

export type { Grant };
export type { TestEventResult } from '../../../src/contracts/test-event.ts';

export interface Me {
  id: number;
  email: string;
  identifier: string;
  grants: Grant[];
  /**
   * Two-factor sign-in: on or off, and the accounts requiring it whose grants wait for the
   * operator to enrol (they are left out of `grants` until then).
   */
  twoFactor: { enabled: boolean; requiredBy: number[]; recoveryCodesLeft: number };
  /** What customers see as the agent's name and avatar when this operator answers. */
  displayName?: string | null;
  avatarUrl?: string | null;
  /** What this server allows (PALAVER_WEBHOOK_ALLOW_PRIVATE). */
  server: { privateWebhookAddresses: boolean };
}

/** A sign-in of an operator (GET /me/sessions, GET /operators/{id}/sessions); never its token. */
export interface OperatorSession {
  id: number;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string;
  address: string | null;
  userAgent: string | null;
  /** The session of this page. */
  current: boolean;
}

/** POST /login: a token, or with two-factor sign-in the challenge of the second step. */
export type LoginAnswer = { token: string; expiresAt: string } | { twoFactorRequired: true; challenge: string; challengeExpiresAt: string };

export interface Service {
  id: number;
  accountId: number;
  identification: string;
  name: string;
  /** `inbox`: the account's team (answers from the dashboard; no webhook, no API keys). */
  kind: 'webhook' | 'inbox';
  webhookUrl: string | null;
  isDefault: boolean;
  enabled: boolean;
  disabledAt: string | null;
  disabledReason: string | null;
  createdAt: string;
}

export interface Account {
  id: number;
  identification: string;
  name: string;
  defaultServiceId: number | null;
  welcomeMessage: string | null;
  stickyMessage: string | null;
  allowedOrigins: string[];
  /** Operators with grants on it must sign in with two factors to use them. */
  requireTwoFactor: boolean;
  createdAt: string;
}

/** The answer that makes an account: its authorization secret is shown this once. */
export interface CreatedAccount extends Account {
  authorizationSecret: string;
}

export interface AccountOverview extends Account {
  /** The webhook Services. */
  services: Service[];
  /** The team inbox (a Service too: it may own conversations and be the default). */
  inbox: Service | null;
  defaultService: Service | null;
}

export interface ApiKey {
  id: number;
  prefix?: string;
  createdAt: string;
  revokedAt?: string | null;
  [key: string]: unknown;
}

export interface Agent {
  id: number;
  name: string;
  avatar: string | null;
}

export interface UserSummary {
  id: number;
  kind: 'anonymous' | 'registered';
  uniqueIdentifier: string | null;
  additionalInformation: Record<string, unknown> | null;
  ownerServiceId: number;
  agent: Agent | null;
  createdAt: string;
}

export interface ChatMessage {
  id: number;
  time: number;
  message: string | null;
  image: string | null;
  typeId: number;
  agent: Agent | null;
  media: ChatMedia | null;
}

/** A message's file: `img/<accountId>/<year>/<month>/<day>/<filename>` is its reference. */
export interface ChatMedia {
  id: string;
  mimeType: string;
  year: string;
  month: string;
  day: string;
  filename: string;
  /** The uploader's file name, or the description sent with the message. */
  description: string | null;
}

export interface Delivery {
  id: string;
  kind: string;
  state: 'pending' | 'delivered' | 'dead';
  attempts: number;
  nextAttemptAt: string | null;
  /** Pending behind an earlier delivery of its conversation: sent once that one is done. */
  waitsForEarlier: boolean;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  payload: unknown;
}

export interface Operator {
  id: number;
  email: string;
  identifier: string;
  grants: Grant[];
  createdAt: string;
  /** Set: cannot sign in, sessions ended. */
  disabledAt: string | null;
  twoFactorEnabled: boolean;
}

export interface DeliveryAttempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  status: number | null;
  error: string | null;
  outcome: 'delivered' | 'retry' | 'dead' | 'gone' | 'unregistered';
  nextAttemptAt: string | null;
}

export interface DeliveryStats {
  pending: number;
  dead: number;
  delivered: number;
  lastHour: Array<{ minute: string; delivered: number; failed: number }>;
}

/** An entry of GET /accounts/{id}/conversations: the user and their last message, if any. */
export interface Conversation {
  user: UserSummary;
  lastMessage: ChatMessage | null;
}

/** GET /adminApi/login: how this server lets operators sign in. */
export interface SignInOptions {
  password: boolean;
  sso: { name: string; startUrl: string } | null;
}
