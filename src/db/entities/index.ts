export * from './account.ts';
export * from './service.ts';
export * from './service-api-key.ts';
export * from './operator.ts';
export * from './operator-permission.ts';
export * from './operator-session.ts';
export * from './operator-security.ts';
export * from './user.ts';
export * from './device.ts';
export * from './message.ts';
export * from './delivery.ts';
export * from './media.ts';

import { AccountSchema } from './account.ts';
import { DeliverySchema } from './delivery.ts';
import { DeviceSchema } from './device.ts';
import { MediaSchema } from './media.ts';
import { MessageSchema } from './message.ts';
import { OperatorPermissionSchema } from './operator-permission.ts';
import { OperatorSessionSchema } from './operator-session.ts';
import { OperatorLoginChallengeSchema, OperatorPasswordResetSchema, OperatorRecoveryCodeSchema } from './operator-security.ts';
import { OperatorSchema } from './operator.ts';
import { ServiceApiKeySchema } from './service-api-key.ts';
import { ServiceSchema } from './service.ts';
import { UserSchema } from './user.ts';

/** Every entity, listed explicitly for the ORM (no folder scanning at start). */
export const entities = [
  AccountSchema,
  ServiceSchema,
  ServiceApiKeySchema,
  OperatorSchema,
  OperatorPermissionSchema,
  OperatorSessionSchema,
  OperatorRecoveryCodeSchema,
  OperatorPasswordResetSchema,
  OperatorLoginChallengeSchema,
  UserSchema,
  DeviceSchema,
  MessageSchema,
  DeliverySchema,
  MediaSchema,
];
