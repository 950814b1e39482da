// What the deployed Parley chat clients read from a GET /messages answer: every key they
// decode, with the JSON types each may have. Written from reading the clients' models
// (web, Android, iOS), so that tests can hold Palaver's answers to them.
export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object';

export function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as JsonType;
}

/** The root of the page: the envelope plus paging, the current agent and the account's texts. */
export const MESSAGES_PAGE: Readonly<Record<string, JsonType[]>> = {
  data: ['array'],
  paging: ['object'],
  agent: ['object', 'null'],
  stickyMessage: ['string', 'null'],
  welcomeMessage: ['string', 'null'],
  notifications: ['array'],
  status: ['string'],
  metadata: ['object'],
};

/** One message of `data`. */
export const MESSAGE: Readonly<Record<string, JsonType[]>> = {
  id: ['number'],
  time: ['number'],
  message: ['string', 'null'],
  image: ['string', 'null'],
  typeId: ['number'],
  agent: ['object', 'null'],
  carousel: ['array'],
  quickReplies: ['array'],
  custom: ['array'],
  title: ['string', 'null'],
  media: ['object', 'null'],
  buttons: ['array'],
  status: ['number'],
};

/** Keys missing from `value` or of a type the clients cannot read, as readable lines. */
export function shapeProblems(value: Record<string, unknown>, shape: Readonly<Record<string, JsonType[]>>, where: string): string[] {
  return Object.entries(shape).flatMap(([key, types]) => {
    if (!(key in value)) return [`${where}.${key} is missing`];
    const actual = jsonType(value[key]);
    return types.includes(actual) ? [] : [`${where}.${key} is ${actual}, clients read ${types.join(' or ')}`];
  });
}
