import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** A grant: `accountId` null means every account, `permission` '*' means every permission. */
export const OperatorPermissionSchema = defineEntity({
  name: 'OperatorPermission',
  tableName: 'operator_permissions',
  properties: (p) => ({
    id: p.integer().primary(),
    operatorId: p.integer(),
    accountId: p.integer().nullable(),
    permission: p.string(),
  }),
});

export type OperatorPermission = InferEntity<typeof OperatorPermissionSchema>;
