// Operators (dashboard users): creation, login sessions and the grants they act under.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  OperatorPermissionSchema,
  OperatorSchema,
  OperatorSessionSchema,
  type AgentSnapshot,
  type Operator,
} from '../db/entities/index.ts';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../security/passwords.ts';
import { alphanumericId, newToken, sha256Hex } from '../security/random.ts';
import { notify, operatorChanged } from '../conversations/notices.ts';
import { isPermission, type Grant } from './permissions.ts';

export interface AuthenticatedOperator {
  id: number;
  /** The session the token belongs to: what signing out ends. */
  sessionId: number;
  /** When the session ends by itself (admin.sessionTtlSeconds after sign-in). */
  sessionExpiresAt: Date;
  email: string;
  identifier: string;
  grants: Grant[];
  /** What customers see when the operator answers (operatorAgent). */
  displayName: string | null;
  avatarUrl: string | null;
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
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function createOperator(em: EntityManager, input: NewOperator): Promise<Operator> {
  const passwordHash = await hashPassword(input.password);
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

/**
 * Returns a bearer token for a right email and password, null otherwise (never which one was
 * wrong); 'disabled' for a right pair of a disabled operator (only someone holding the password
 * learns it, and they need to know why they cannot get in).
 */
export async function login(
  em: EntityManager,
  email: string,
  password: string,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: Date } | 'disabled' | null> {
  const operator = await em.findOne(OperatorSchema, { email: normalizeEmail(email) });
  const matches = await verifyPassword(password, operator?.passwordHash ?? (await dummyPasswordHash()));
  if (!operator || !matches) return null;
  if (operator.disabledAt) return 'disabled';
  const token = newToken('pat');
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  em.create(OperatorSessionSchema, { operatorId: operator.id, tokenHash: sha256Hex(token), expiresAt });
  await em.flush();
  return { token, expiresAt };
}

export async function authenticateOperator(em: EntityManager, token: string): Promise<AuthenticatedOperator | null> {
  const session = await em.findOne(OperatorSessionSchema, {
    tokenHash: sha256Hex(token),
    expiresAt: { $gt: new Date() },
  });
  if (!session) return null;
  const operator = await em.findOne(OperatorSchema, { id: session.operatorId });
  if (!operator || operator.disabledAt) return null;
  const rows = await em.find(OperatorPermissionSchema, { operatorId: operator.id });
  const grants: Grant[] = [];
  for (const row of rows) {
    if (isPermission(row.permission)) grants.push({ accountId: row.accountId ?? null, permission: row.permission });
  }
  return {
    id: operator.id,
    sessionId: session.id,
    sessionExpiresAt: session.expiresAt,
    email: operator.email,
    identifier: operator.identifier,
    grants,
    displayName: operator.displayName ?? null,
    avatarUrl: operator.avatarUrl ?? null,
  };
}

/** Signing out: the session's token is refused from now on, and its dashboard sockets end. */
export async function endSession(em: EntityManager, operator: { id: number; sessionId: number }): Promise<void> {
  await em.transactional(async (tx) => {
    await tx.nativeDelete(OperatorSessionSchema, { id: operator.sessionId });
    notify(tx, operatorChanged(operator.id));
  });
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
export async function replaceGrants(em: EntityManager, operatorId: number, grants: Grant[]): Promise<OperatorWithGrants | null> {
  return em.transactional(async (tx) => {
    const operator = await tx.findOne(OperatorSchema, { id: operatorId });
    if (!operator) return null;
    await tx.nativeDelete(OperatorPermissionSchema, { operatorId });
    const unique = new Map(grants.map((g) => [`${g.accountId ?? '*'}|${g.permission}`, g]));
    for (const grant of unique.values()) tx.create(OperatorPermissionSchema, { operatorId, ...grant });
    // Their dashboard sockets hear only what the new grants allow.
    notify(tx, operatorChanged(operatorId));
    return { operator, grants: [...unique.values()] };
  });
}

/**
 * Disables or enables an operator; null when there is no such operator. Disabling also ends
 * their sessions, so enabling them again does not bring old tokens back.
 */
export async function setOperatorDisabled(em: EntityManager, operatorId: number, disabled: boolean): Promise<OperatorWithGrants | null> {
  await em.transactional(async (tx) => {
    const operator = await tx.findOne(OperatorSchema, { id: operatorId });
    if (!operator) return;
    // An operator disabled earlier keeps the moment it happened.
    operator.disabledAt = disabled ? (operator.disabledAt ?? new Date()) : null;
    if (disabled) await tx.nativeDelete(OperatorSessionSchema, { operatorId });
    notify(tx, operatorChanged(operatorId));
  });
  const [found] = (await listOperators(em.fork())).filter((o) => o.operator.id === operatorId);
  return found ?? null;
}
