import type { Admission } from './http/admission.ts';
import type { Redis } from 'ioredis';
import type { TrustedProxies } from './addresses.ts';
import type { Config } from './config.ts';
import type { Database } from './db/orm.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ClientCallers } from './api/client/caller.ts';
import type { ServiceCallers } from './api/service/caller.ts';
import type { AgentMessageWriter } from './conversations/agents.ts';
import type { ClientMessageWriter } from './conversations/client-messages.ts';
import type { TypingTimeouts } from './conversations/client-events.ts';
import type { DeliveryWorker } from './deliveries/worker.ts';
import type { InboundMail } from './email/inbound.ts';
import type { MediaStorage } from './media/storage.ts';
import type { Gateway } from './realtime/gateway.ts';

/** The long-lived parts of one running server, handed to every request as ctx.deps. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  db: Database;
  metrics: Metrics;
  /** Present when REDIS_URL is set. */
  redis: Redis | undefined;
  /** This node's delivery worker; absent when webhooks.enabled is off. */
  deliveries: DeliveryWorker | undefined;
  typing: TypingTimeouts;
  /** Chat clients' messages, group-committed. */
  messages: ClientMessageWriter;
  /** Agents' messages (Service API), group-committed. */
  agentMessages: AgentMessageWriter;
  /** Who is calling the Client API (REST and sockets). */
  callers: ClientCallers;
  /** Who is calling the Service API (its keys, kept until their account changes). */
  serviceCallers: ServiceCallers;
  media: MediaStorage;
  /** This node's bound on client writes in progress (503 server_busy past it). */
  admission: Admission;
  /** Client API writes per device. */
  writeLimiter: RateLimiterAbstract;
  /** Client API writes per client address (addresses.ts). */
  addressWriteLimiter: RateLimiterAbstract;
  /** The Socket.IO gateway: REST changes are published to sockets through it, after commit. */
  realtime: Gateway;
  /** Failed admin logins per email and client address. */
  loginLimiter: RateLimiterAbstract;
  /** Failed admin logins per client address, any email. */
  loginAddressLimiter: RateLimiterAbstract;
  /** Failed admin logins per email, from any address (a short window: it slows, never locks out for long). */
  loginEmailLimiter: RateLimiterAbstract;
  /** Two-factor codes per operator (sign-in, enrolment, turning it off). */
  twoFactorLimiter: RateLimiterAbstract;
  /** Replies by email (email/inbound.ts): present when `email.inbound.domain` is set. */
  inbound: InboundMail | undefined;
  /** Transcripts by email asked for, per user. */
  transcriptLimiter: RateLimiterAbstract;
  /** Whose X-Forwarded-For is believed: the client address of requests and socket handshakes. */
  trustedProxies: TrustedProxies;
}
