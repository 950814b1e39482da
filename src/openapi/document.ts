// The OpenAPI 3.1 document served at /openapi.json, built from operations.ts and the zod
// schemas (JSON Schema 2020-12, which OpenAPI 3.1 uses as it is).
import { z } from 'zod';
import { CLIENT_PREFIXES } from '../api/client/routers.ts';
import { SERVICE_PREFIXES } from '../api/service/routers.ts';
import { operations, type Api, type Operation } from './operations.ts';

type Json = Record<string, unknown>;

const schemaOf = (schema: z.ZodType): Json => {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  // Embedded in the document, whose dialect (JSON Schema 2020-12) OpenAPI 3.1 already sets.
  delete json.$schema;
  return json;
};

function parameters(operation: Operation): Json[] {
  const list: Json[] = [];
  for (const [where, schema] of [
    ['path', operation.params],
    ['query', operation.query],
  ] as const) {
    if (!schema) continue;
    const json = schemaOf(schema) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      list.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema: property });
    }
  }
  return list;
}

const SECURITY: Record<Api, Json[]> = {
  health: [],
  web: [],
  admin: [{ operatorToken: [] }],
  client: [{ identification: [] }, { identification: [], customerAuthorization: [] }],
  service: [{ serviceKey: [] }],
};

/**
 * The Client API's writes, every one behind limitWrites() (http/admission.ts), as the OpenAPI
 * test checks against the routers: each may be refused 503 server_busy when the node is full.
 */
const admitted = (operation: Operation) => operation.api === 'client' && operation.method !== 'get';

const ENVELOPE = { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } };

const SERVER_BUSY = {
  description:
    'server_busy: the node is full (too many client writes in progress, its database busy, or its CPU full while its webhooks fall behind or the answers of its Services wait). Nothing was written or counted; send the same request again after Retry-After seconds (the error data carries retryAfter too).',
  headers: { 'Retry-After': { description: 'Seconds to wait before sending again', schema: { type: 'integer', minimum: 1 } } },
  content: ENVELOPE,
};

function describe(operation: Operation): Json {
  const status = String(operation.status ?? 200);
  const body = operation.body
    ? { content: { 'application/json': { schema: schemaOf(operation.body) } }, required: true }
    : operation.upload
      ? {
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                properties: { [operation.upload]: { type: 'string', format: 'binary' } },
                required: [operation.upload],
              },
            },
          },
          required: true,
        }
      : undefined;
  return {
    summary: operation.summary,
    tags: [operation.api],
    parameters: parameters(operation),
    ...(body ? { requestBody: body } : {}),
    security: operation.public ? [] : SECURITY[operation.api],
    responses: {
      [status]:
        operation.status === 302
          ? { description: 'A redirect (Location)' }
          : operation.produces
            ? { description: 'Success', content: { [operation.produces]: { schema: { type: 'string' } } } }
            : { description: 'Success', content: ENVELOPE },
      ...(admitted(operation) ? { 503: SERVER_BUSY } : {}),
      default: { description: 'An error, in the same envelope', content: ENVELOPE },
    },
  };
}

const PREFIXES: Record<Api, readonly string[]> = {
  health: [''],
  web: [''],
  admin: [''],
  client: CLIENT_PREFIXES,
  service: SERVICE_PREFIXES,
};

export function openApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const operation of operations) {
    for (const prefix of PREFIXES[operation.api]) {
      if (operation.versionedOnly && !prefix) continue;
      const path = prefix + operation.path;
      paths[path] = { ...paths[path], [operation.method]: describe(operation) };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Palaver',
      version: '0.1.0',
      description:
        'Client API (chat widgets and apps; also under /clientApi/v1.6 to v1.9), Service API (attached backends; also under /serviceApi/v2.3) and Admin API (operators). Every answer is the envelope.',
    },
    paths,
    components: {
      securitySchemes: {
        identification: {
          type: 'apiKey',
          in: 'header',
          name: 'x-iris-identification',
          description: '<accountIdentification>:<uniqueAppDeviceId>',
        },
        customerAuthorization: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'Registered users: the header issued by the customer backend',
        },
        serviceKey: { type: 'http', scheme: 'bearer', description: 'A Service API key' },
        operatorToken: { type: 'http', scheme: 'bearer', description: 'From POST /adminApi/login' },
      },
      schemas: {
        Envelope: {
          type: 'object',
          required: ['data', 'notifications', 'status', 'metadata'],
          properties: {
            data: {},
            notifications: {
              type: 'array',
              items: {
                type: 'object',
                required: ['type', 'message'],
                properties: {
                  type: { enum: ['success', 'warning', 'error'] },
                  message: { type: 'string', description: 'A stable snake_case code' },
                  field: { type: 'string' },
                  detail: { type: 'string' },
                },
              },
            },
            status: { enum: ['SUCCESS', 'ERROR'] },
            metadata: {
              type: 'object',
              properties: {
                values: { type: 'object', properties: { url: { type: 'string' } } },
                method: { type: 'string' },
                duration: { type: 'number' },
              },
            },
          },
        },
      },
    },
  };
}
