// Operators (dashboard users): creation, login sessions and the grants they act under.
import { transaction } from '../db/tx/run.ts';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  OperatorLoginChallengeSchema,
  OperatorPasswordResetSchema,
  OperatorPermissionSchema,
  OperatorSchema,
  OperatorSessionSchema,
  type AgentSnapshot,
  type Operator,
  type OperatorSession,
} from '../db/entities/index.ts';
import { dummyPasswordHash, hashPassword, needsRehash, verifyPassword } from '../security/passwords.ts';
import { alphanumericId, newToken, sha256Hex } from '../security/random.ts';
import { notify, operatorChanged } from '../conversations/notices.ts';
import { isPermission, type Grant } from './permissions.ts';
import { recordAudit, recordNote } from '../audit/entries.ts';
import { operatorActor, type AuditContext, type AuditNote, type AuditRequest } from '../audit/context.ts';

export interface AuthenticatedOperator {
  id: number;
  /** The session the token belongs to: what signing out ends. */
  sessionId: number;
  /** When the session ends by itself (admin.sessionTtlSeconds after sign-in). */
  sessionExpiresAt: Date;
  email: string;
  identifier: string;
  /** The grants this session acts under: those on accounts requiring two factors are withheld without it. */
  grants: Grant[];
  /** What customers see when the operator answers (operatorAgent). */
  displayName: string | null;
  avatarUrl: string | null;
  twoFactorEnabled: boolean;
  /**
   * Accounts requiring two-factor sign-in on which the operator holds grants they cannot use
   * until they enrol (a grant on every account counts for each). Empty when enrolled.
   */
  twoFactorRequiredBy: number[];
}

/** The name an answer carries when the operator has set none: not their email, which customers must not see. */
export const DEFAULT_AGENT_NAME = 'Support';

/**
 * The operator as the agent of their answers (typeId 2 messages, agent typing): their id, display
 * name and avatar, as a Service's agent is. Operator ids and a Service's own agent ids are
 * separate number spaces: a widget tells agents apart by id, name and avatar together.
 */
export function operatorAgent(operator: Pick<AuthenticatedOperator, 'id' | 'displayName' | 'avatarUrl'>): AgentSnapshot {
  return { id: operator.id, name: operator.displayName ?? DEFAULT_AGENT_NAME, avatar: operator.avatarUrl };
}

export interface ProfileChanges {
  displayName?: string | null | undefined;
  avatarUrl?: string | null | undefined;
}

/** The operator's own display name and avatar (PATCH /adminApi/session). */
export async function updateProfile(em: EntityManager, operatorId: number, changes: ProfileChanges): Promise<Operator | null> {
  const operator = await em.findOne(OperatorSchema, { id: operatorId });
  if (!operator) return null;
  if (changes.displayName !== undefined) operator.displayName = changes.displayName;
  if (changes.avatarUrl !== undefined) operator.avatarUrl = changes.avatarUrl;
  await em.flush();
  return operator;
}

export interface NewOperator {
  email: string;
  password: string;
  grants: Grant[];
  /** log2 of scrypt's N: always the configuration's `security.passwordHashCost`, never a default. */
  hashCost: number;
}

/** Where a sign-in comes from, shown to the operator in their list of sessions. */
export interface SignInOrigin {
  address: string | null;
  userAgent: string | null;
  /** The request's id, for the audit log. */
  requestId?: string | null;
}

/** The audit context of a sign-in step: the operator it is for when known, the email tried otherwise. */
export function signInContext(
  from: SignInOrigin,
  operator: Pick<Operator, 'id' | 'identifier' | 'email'> | null,
  email?: string,
): AuditContext {
  const origin = { address: from.address, userAgent: from.userAgent, requestId: from.requestId ?? null };
  if (operator && email === undefined) return { ...origin, actor: operatorActor(operator, null) };
  return {
    ...origin,
    actor: {
      kind: 'anonymous',
      operator: operator ? { id: operator.id, identifier: operator.identifier, email: operator.email } : null,
      sessionId: null,
      email: email || null,
    },
  };
}

export interface LoginOptions extends SignInOrigin {
  ttlSeconds: number;
  hashCost: number;
  /** How long the second step of a two-factor sign-in may wait. */
  challengeTtlSeconds: number;
}

export type LoginResult =
  | { kind: 'session'; token: string; expiresAt: Date; sessionId: number }
  | { kind: 'two-factor'; challenge: string; expiresAt: Date }
  | 'disabled'
  | null;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function createOperator(em: EntityManager, input: NewOperator): Promise<Operator> {
  const passwordHash = await hashPassword(input.password, input.hashCost);
  return em.transactional(async (tx) => {
    const operator = tx.create(OperatorSchema, {
      email: normalizeEmail(input.email),
      identifier: `op_${alphanumericId(12)}`,
      passwordHash,
    });
    await tx.flush();
    for (const grant of input.grants) {
      tx.create(OperatorPermissionSchema, { operatorId: operator.id, ...grant });
    }
    return operator;
  });
}

/** Creates the operator if no operator has that email; an existing one is left as it is. */
export async function ensureOperator(em: EntityManager, input: NewOperator): Promise<{ created: boolean }> {
  const existing = await em.findOne(OperatorSchema, { email: normalizeEmail(input.email) });
  if (existing) return { created: false };
  try {
    await createOperator(em, input);
    return { created: true };
  } catch (err) {
    // Another node starting at the same moment created it first.
    if (err instanceof UniqueConstraintViolationException) return { created: false };
    throw err;
  }
}

/** Column widths of what a session shows: longer values are cut, not refused. */
function origin(from: SignInOrigin): SignInOrigin {
  return { address: from.address?.slice(0, 64) ?? null, userAgent: from.userAgent?.slice(0, 512) ?? null };
}

/** A new session (bearer token) of the operator. */
export async function startSession(
  em: EntityManager,
  operatorId: number,
  ttlSeconds: number,
  from: SignInOrigin,
): Promise<{ kind: 'session'; token: string; expiresAt: Date; sessionId: number }> {
  const token = newToken('pat');
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  const session = em.create(OperatorSessionSchema, {
    operatorId,
    tokenHash: sha256Hex(token),
    expiresAt,
    lastUsedAt: new Date(),
    ...origin(from),
  });
  await em.flush();
  return { kind: 'session', token, expiresAt, sessionId: session.id };
}

/**
 * For a right email and password: a session, or, for an operator with two-factor sign-in, a
 * challenge to present with the code (the password alone gives no session). Null otherwise
 * (never which one was wrong); 'disabled' for a right pair of a disabled operator (only someone
 * holding the password learns it, and they need to know why they cannot get in). A hash made
 * with another cost than the configured one is made again while the password is at hand.
 */
export async function login(em: EntityManager, email: string, password: string, options: LoginOptions): Promise<LoginResult> {
  const operator = await em.findOne(OperatorSchema, { email: normalizeEmail(email) });
  const matches = await verifyPassword(password, operator?.passwordHash ?? (await dummyPasswordHash(options.hashCost)));
  if (!operator || !matches) {
    // The email tried, and the operator it matched if any: a guesser shows up in the log.
    await recordAudit(em, signInContext(options, operator, normalizeEmail(email).slice(0, 320)), {
      action: 'sign_in.password',
      outcome: 'failure',
    });
    return null;
  }
  if (operator.disabledAt) {
    await recordAudit(em, signInContext(options, operator), { action: 'sign_in.password', outcome: 'refused' });
    return 'disabled';
  }
  const passwordHash = needsRehash(operator.passwordHash, options.hashCost) ? await hashPassword(password, options.hashCost) : null;
  return em.transactional(async (tx) => {
    if (passwordHash) await tx.nativeUpdate(OperatorSchema, { id: operator.id }, { passwordHash });
    const context = signInContext(options, operator);
    if (operator.totpEnabledAt) {
      const challenge = newToken('ptc');
      const expiresAt = new Date(Date.now() + options.challengeTtlSeconds * 1000);
      tx.create(OperatorLoginChallengeSchema, { operatorId: operator.id, tokenHash: sha256Hex(challenge), expiresAt, ...origin(options) });
      await tx.flush();
      // The password was right; the second step is recorded on its own.
      await recordAudit(tx, context, { action: 'sign_in.password', target: { operatorId: operator.id }, changed: ['challenge'] });
      return { kind: 'two-factor', challenge, expiresAt };
    }
    const session = await startSession(tx, operator.id, options.ttlSeconds, options);
    await recordAudit(tx, context, { action: 'sign_in.password', target: { operatorId: operator.id, sessionId: session.sessionId } });
    return session;
  });
}

/** A session's last use is written at most this often, not at every request. */
const LAST_USED_EVERY_MS = 60_000;

interface SignedInRow {
  session_id: number;
  // Timestamps come as the driver gives them (text here): read through new Date().
  expires_at: string | Date;
  last_used_at: string | Date | null;
  id: number;
  email: string;
  identifier: string;
  display_name: string | null;
  avatar_url: string | null;
  totp_enabled_at: string | Date | null;
  grants: Array<[number | null, string]>;
  requiring: number[];
}

// Every Admin API request starts here, so the session, its operator, their grants and the
// accounts that require two factors are read in one statement: one round trip, not four.
const SIGNED_IN_SQL = `
  select s.id as session_id, s.expires_at, s.last_used_at, o.id, o.email, o.identifier, o.display_name, o.avatar_url,
         o.totp_enabled_at,
         coalesce((select json_agg(json_build_array(p.account_id, p.permission)) from operator_permissions p
                    where p.operator_id = o.id), '[]'::json) as grants,
         case when o.totp_enabled_at is null
              then coalesce((select json_agg(a.id) from accounts a where a.require_two_factor), '[]'::json)
              else '[]'::json end as requiring
    from operator_sessions s
    join operators o on o.id = s.operator_id and o.disabled_at is null
   where s.token_hash = ? and s.expires_at > now()`;

export async function authenticateOperator(em: EntityManager, token: string): Promise<AuthenticatedOperator | null> {
  const [row] = await em.getConnection().execute<SignedInRow[]>(SIGNED_IN_SQL, [sha256Hex(token)]);
  if (!row) return null;
  if (!row.last_used_at || Date.now() - new Date(row.last_used_at).getTime() > LAST_USED_EVERY_MS) {
    await em.nativeUpdate(OperatorSessionSchema, { id: row.session_id }, { lastUsedAt: new Date() });
  }
  let grants: Grant[] = [];
  for (const [accountId, permission] of row.grants) {
    if (isPermission(permission)) grants.push({ accountId, permission });
  }
  const twoFactorEnabled = row.totp_enabled_at != null;
  let twoFactorRequiredBy: number[] = [];
  if (!twoFactorEnabled && grants.length > 0) {
    // Grants on an account that requires two factors are withheld until the operator enrols; a
    // grant on every account covers those accounts too, so it is withheld whole.
    const everywhere = grants.some((g) => g.accountId === null);
    twoFactorRequiredBy = everywhere ? row.requiring : row.requiring.filter((id) => grants.some((g) => g.accountId === id));
    const withheld = new Set(twoFactorRequiredBy);
    if (withheld.size > 0) grants = grants.filter((g) => g.accountId !== null && !withheld.has(g.accountId));
  }
  return {
    id: row.id,
    sessionId: row.session_id,
    sessionExpiresAt: new Date(row.expires_at),
    email: row.email,
    identifier: row.identifier,
    grants,
    displayName: row.display_name,
    avatarUrl: row.avatar_url,
    twoFactorEnabled,
    twoFactorRequiredBy: [...twoFactorRequiredBy].sort((a, b) => a - b),
  };
}

/** Signing out: the session's token is refused from now on, and its dashboard sockets end. */
export async function endSession(em: EntityManager, operator: { id: number; sessionId: number }, audit: AuditRequest): Promise<void> {
  await transaction(em, async (tx) => {
    await tx.em.nativeDelete(OperatorSessionSchema, { id: operator.sessionId });
    await recordAudit(tx.em, audit.context, { action: audit.action, target: { operatorId: operator.id, sessionId: operator.sessionId } });
    notify(tx, operatorChanged(operator.id));
  });
}

/** The operator's sessions that have not expired, newest first. */
export async function listSessions(em: EntityManager, operatorId: number): Promise<OperatorSession[]> {
  return em.find(OperatorSessionSchema, { operatorId, expiresAt: { $gt: new Date() } }, { orderBy: { id: 'desc' } });
}

/** Ends one session of the operator; false when they have no such session. */
export async function endSessionOf(em: EntityManager, operatorId: number, sessionId: number): Promise<boolean> {
  return (await em.nativeDelete(OperatorSessionSchema, { id: sessionId, operatorId })) > 0;
}

/** Ends every session of the operator but `keep` (null: all of them); how many ended. */
export async function endSessions(em: EntityManager, operatorId: number, keep: number | null = null): Promise<number> {
  return em.nativeDelete(OperatorSessionSchema, keep === null ? { operatorId } : { operatorId, id: { $ne: keep } });
}

/**
 * A new password, checked against the current one. Every other session of the operator ends,
 * as do unused reset links and sign-ins waiting for their second step: whoever knew the old
 * password keeps nothing it gave. 'wrong_password' when the current one does not match.
 */
export async function changePassword(
  em: EntityManager,
  input: { operatorId: number; sessionId: number; currentPassword: string; newPassword: string; hashCost: number },
  audit: AuditRequest,
): Promise<'changed' | 'wrong_password'> {
  const operator = await em.findOneOrFail(OperatorSchema, { id: input.operatorId });
  if (!(await verifyPassword(input.currentPassword, operator.passwordHash))) {
    await recordAudit(em, audit.context, { action: audit.action, target: { operatorId: operator.id }, outcome: 'failure' });
    return 'wrong_password';
  }
  const passwordHash = await hashPassword(input.newPassword, input.hashCost);
  await transaction(em, async (tx) => {
    await recordAudit(tx.em, audit.context, { action: audit.action, target: { operatorId: operator.id }, changed: ['password'] });
    await tx.em.nativeUpdate(OperatorSchema, { id: operator.id }, { passwordHash });
    await endSessions(tx.em, operator.id, input.sessionId);
    await tx.em.nativeDelete(OperatorPasswordResetSchema, { operatorId: operator.id, usedAt: null });
    await tx.em.nativeDelete(OperatorLoginChallengeSchema, { operatorId: operator.id });
  });
  return 'changed';
}

export interface OperatorWithGrants {
  operator: Operator;
  grants: Grant[];
}

export async function listOperators(em: EntityManager): Promise<OperatorWithGrants[]> {
  const operators = await em.find(OperatorSchema, {}, { orderBy: { id: 'asc' } });
  const rows = await em.find(OperatorPermissionSchema, { operatorId: { $in: operators.map((o) => o.id) } });
  return operators.map((operator) => ({
    operator,
    grants: rows
      .filter((r) => r.operatorId === operator.id)
      .flatMap((r) => (isPermission(r.permission) ? [{ accountId: r.accountId ?? null, permission: r.permission }] : [])),
  }));
}

/** Replaces the operator's grants; null when there is no such operator. */
export async function replaceGrants(
  em: EntityManager,
  operatorId: number,
  grants: Grant[],
  audit?: AuditNote,
): Promise<OperatorWithGrants | null> {
  return transaction(em, async (tx) => {
    const operator = await tx.em.findOne(OperatorSchema, { id: operatorId });
    if (!operator) return null;
    await tx.em.nativeDelete(OperatorPermissionSchema, { operatorId });
    const unique = new Map(grants.map((g) => [`${g.accountId ?? '*'}|${g.permission}`, g]));
    for (const grant of unique.values()) tx.em.create(OperatorPermissionSchema, { operatorId, ...grant });
    // Their dashboard sockets hear only what the new grants allow.
    notify(tx, operatorChanged(operatorId));
    await recordNote(tx.em, audit, { target: { operatorId }, changed: ['grants'] });
    return { operator, grants: [...unique.values()] };
  });
}

/**
 * Disables or enables an operator; null when there is no such operator. Disabling also ends
 * their sessions, so enabling them again does not bring old tokens back.
 */
export async function setOperatorDisabled(
  em: EntityManager,
  operatorId: number,
  disabled: boolean,
  audit?: AuditNote,
): Promise<OperatorWithGrants | null> {
  await transaction(em, async (tx) => {
    const operator = await tx.em.findOne(OperatorSchema, { id: operatorId });
    if (!operator) return;
    // An operator disabled earlier keeps the moment it happened.
    operator.disabledAt = disabled ? (operator.disabledAt ?? new Date()) : null;
    if (disabled) {
      await tx.em.nativeDelete(OperatorSessionSchema, { operatorId });
      await tx.em.nativeDelete(OperatorLoginChallengeSchema, { operatorId });
    }
    notify(tx, operatorChanged(operatorId));
    await recordNote(tx.em, audit, { target: { operatorId }, changed: ['disabled'] });
  });
  const [found] = (await listOperators(em.fork())).filter((o) => o.operator.id === operatorId);
  return found ?? null;
}

/** The operators an answer names (assignees, note authors), by display name or else email: pages show people, not ids. */
export async function operatorNames(
  em: EntityManager,
  ids: Iterable<number | null>,
): Promise<Array<{ id: number; name: string; avatarUrl: string | null }>> {
  const wanted = [...new Set([...ids].filter((id): id is number => id !== null))];
  if (wanted.length === 0) return [];
  const found = await em.find(OperatorSchema, { id: { $in: wanted } }, { orderBy: { id: 'asc' } });
  return found.map((o) => ({ id: o.id, name: o.displayName ?? o.email, avatarUrl: o.avatarUrl ?? null }));
}

export async function operatorExists(em: EntityManager, operatorId: number): Promise<boolean> {
  return (await em.count(OperatorSchema, { id: operatorId })) > 0;
}
