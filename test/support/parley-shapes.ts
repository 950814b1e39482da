// What the deployed Parley chat clients (web 2.0.0, Android 3.13.0, iOS 4.4.2) require of
// Palaver's answers: ONE schema, the strictest reading of the three decoders, key by key with
// the JSON types (and values) each may have. Written from reading the libraries' models and
// decoders; each rule says which library needs it. Tests hold every answer to it:
// `answerProblems(PARLEY.messagesPage, answer)` lists what a client could not read.
//
//   web      reads `status: "ERROR"` and `notifications[0]` of type "error" (never the HTTP
//            status); needs a JSON content type; ow/PropTypes checks on ids, media and carousels.
//   Android  Gson: a non-2xx status is an error (first notification's message); a body that
//            does not parse throws on the main thread (the host app crashes).
//   iOS      JSONDecoder, strict: a non-2xx status is an error; one undecodable key fails the
//            whole request (a whole page of messages).

export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object';

export function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as JsonType;
}

/** One value of an answer: its JSON types, and what else it must be for each type it has. */
export interface Rule {
  types: readonly JsonType[];
  /** Numbers: whole numbers, within min…max. */
  integer?: boolean;
  min?: number;
  max?: number;
  /** Strings and numbers: one of these values. */
  values?: readonly (string | number)[];
  /** Strings: matching this. */
  pattern?: RegExp;
  /** Objects: keys that must be there. */
  keys?: Readonly<Record<string, Rule>>;
  /** Objects: keys read only when present. */
  optional?: Readonly<Record<string, Rule>>;
  /** Arrays: every item (a function for rules that contain themselves). */
  items?: Rule | (() => Rule);
  minItems?: number;
  /** Objects: rules across keys, as readable problems (`where` is the object's path). */
  across?: (value: Record<string, unknown>, where: string) => string[];
  /** Who needs it, for the reader of a failure. */
  why?: string;
}

type Json = Record<string, unknown>;

const rule = (types: readonly JsonType[], more: Omit<Rule, 'types'> = {}): Rule => ({ types, ...more });

export const string = (more: Omit<Rule, 'types'> = {}) => rule(['string'], more);
export const integer = (more: Omit<Rule, 'types' | 'integer'> = {}) => rule(['number'], { integer: true, ...more });
export const object = (keys: Record<string, Rule>, more: Omit<Rule, 'types' | 'keys'> = {}) => rule(['object'], { keys, ...more });
export const arrayOf = (items: Rule | (() => Rule), more: Omit<Rule, 'types' | 'items'> = {}) => rule(['array'], { items, ...more });
/** The same rule, or null. */
export const orNull = (r: Rule): Rule => ({ ...r, types: [...r.types, 'null'] });
/** Any JSON value: present, whatever it is. */
export const anything = rule(['string', 'number', 'boolean', 'null', 'array', 'object']);

/** What is wrong with `value` by `r`, as lines naming the path (`where`). */
export function schemaProblems(r: Rule, value: unknown, where = 'answer'): string[] {
  const actual = jsonType(value);
  const say = (what: string) => `${where} ${what}${r.why ? ` (${r.why})` : ''}`;
  if (!r.types.includes(actual)) {
    return [
      say(
        `is ${actual === 'string' ? JSON.stringify(value) : actual === 'number' ? `the number ${String(value)}` : actual}, clients read ${r.types.join(' or ')}`,
      ),
    ];
  }
  const problems: string[] = [];
  if (actual === 'number') {
    const n = value as number;
    if (r.integer && !Number.isInteger(n)) problems.push(say(`is ${n}, not a whole number`));
    if (r.min !== undefined && n < r.min) problems.push(say(`is ${n}, below ${r.min}`));
    if (r.max !== undefined && n > r.max) problems.push(say(`is ${n}, above ${r.max}`));
  }
  if ((actual === 'number' || actual === 'string') && r.values && !r.values.includes(value as string | number)) {
    problems.push(say(`is ${JSON.stringify(value)}, clients know ${r.values.map((v) => JSON.stringify(v)).join(', ')}`));
  }
  if (actual === 'string' && r.pattern && !r.pattern.test(value as string)) {
    problems.push(say(`is ${JSON.stringify(value)}, not ${String(r.pattern)}`));
  }
  if (actual === 'object') {
    const o = value as Json;
    for (const [key, inner] of Object.entries(r.keys ?? {})) {
      if (!(key in o)) problems.push(`${where}.${key} is missing${inner.why ? ` (${inner.why})` : ''}`);
      else problems.push(...schemaProblems(inner, o[key], `${where}.${key}`));
    }
    for (const [key, inner] of Object.entries(r.optional ?? {})) {
      if (key in o) problems.push(...schemaProblems(inner, o[key], `${where}.${key}`));
    }
    if (r.across) problems.push(...r.across(o, where));
  }
  if (actual === 'array') {
    const list = value as unknown[];
    if (r.minItems !== undefined && list.length < r.minItems)
      problems.push(say(`has ${list.length} items, clients need at least ${r.minItems}`));
    if (r.items) {
      const item = typeof r.items === 'function' ? r.items() : r.items;
      list.forEach((v, i) => problems.push(...schemaProblems(item, v, `${where}[${i}]`)));
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The parts

/** `{type, message}`: the message is the code (`device_requires_authorization`). */
const notification = object({
  type: string({ why: 'web compares it with "error"; iOS decodes it as a String' }),
  message: string({ why: 'the code: web and Android show texts by it, iOS decodes it as a String' }),
});

/** An agent, on a message and as the conversation's current one. */
export const agent = object({
  id: integer({ why: 'iOS decodes Int, required; web PropTypes number' }),
  name: string({ why: 'web reads .length; Android calls .trim() (null crashes)' }),
  avatar: orNull(string()),
  isTyping: rule(['null', 'number'], { why: 'Android decodes a long: a boolean or a date string fails the whole page' }),
});

/** `<a>/<b>/<y>/<m>/<d>/<file>`: Android and iOS fetch `media/` + the id without its first two segments. */
function mediaIdMatchesFields(media: Json, where: string): string[] {
  if ([media.id, media.year, media.month, media.day, media.filename].some((v) => typeof v !== 'string')) return [];
  const fromId = (media.id as string).split('/').slice(2).join('/');
  const fromFields = `${media.year as string}/${media.month as string}/${media.day as string}/${media.filename as string}`;
  return fromId === fromFields
    ? []
    : [
        `${where}.id is ${JSON.stringify(media.id)}: without its first two segments it must be ${fromFields} (Android and iOS GET media/ + that; web uses the fields)`,
      ];
}

/** A file of a message. */
export const media = object(
  {
    id: string({ why: 'iOS MediaObject, required' }),
    mimeType: string({ why: 'iOS MediaObject, required; web picks image or file by it' }),
    year: string({ why: 'web PropTypes string, isRequired; builds GET media/{y}/{m}/{d}/{file}' }),
    month: string({ why: 'web PropTypes string, isRequired' }),
    day: string({ why: 'web PropTypes string, isRequired' }),
    filename: string({ why: 'web PropTypes string, isRequired' }),
    description: string({ why: 'web PropTypes string, isRequired (alt text, file card)' }),
  },
  { across: mediaIdMatchesFields },
);

export const BUTTON_TYPES = ['webUrl', 'phoneNumber', 'reply'] as const;

export const button = object({
  title: string({ why: 'iOS: required String' }),
  payload: string({ why: 'web PropTypes string' }),
  type: string({ values: BUTTON_TYPES, why: 'iOS enum: any other value fails the whole page' }),
});

/** The keys of a message (and, but for `id`, of a carousel card). */
function messageKeys(): Record<string, Rule> {
  return {
    time: integer({ min: 1, why: 'seconds: web multiplies by 1000; iOS Int > 0 (0 throws dateInvalid)' }),
    message: orNull(string()),
    image: orNull(string({ why: 'Android (legacy): the image URL when media is not an image' })),
    typeId: integer({ min: 1, max: 5, why: 'iOS enum 1–5, any other fails the whole page; Android picks the view by it' }),
    agent: orNull(agent),
    carousel: arrayOf(carouselItem, { why: 'web reads .length unguarded: null crashes rendering' }),
    quickReplies: arrayOf(string(), { why: 'web, iOS [String]' }),
    custom: arrayOf(anything, { why: 'in the reference bodies; no library reads it' }),
    title: orNull(string()),
    media: orNull(media),
    buttons: arrayOf(button),
    status: integer({ min: 2, max: 4, why: 'iOS enum 2–4, any other fails the whole page; web < 4 = unseen' }),
  };
}

/** A message as GET /messages, GET /messages/{id} and socket pushes carry it. */
export const message: Rule = object({
  id: integer({ min: 1, why: 'web ow number and sorts by it; iOS try? Int (a string silently breaks polling and receipts)' }),
  ...messageKeys(),
});

/** A card of a carousel: a message but for the id; iOS needs its typeId since it has a carousel key. */
export function carouselItem(): Rule {
  return object(messageKeys());
}

/** The envelope of every answer, with `data` by `data` and, beside it, `extra` root keys. */
export function envelope(data: Rule, extra: Record<string, Rule> = {}, status: 'SUCCESS' | 'ERROR' = 'SUCCESS'): Rule {
  return object({
    data,
    notifications: arrayOf(notification, { why: 'Android reads the first on errors (missing: NullPointerException)' }),
    status: string({ values: [status], why: 'web: "ERROR" is an error whatever the HTTP status; iOS decodes the enum on errors' }),
    metadata: object(
      {
        values: object({}),
        method: string({ why: 'iOS ParleyErrorResponse: required when metadata is there' }),
        duration: rule(['number'], { why: 'iOS: Double' }),
      },
      { why: 'Android GetMessagesResponse, iOS ParleyErrorResponse' },
    ),
    ...extra,
  });
}

// ---------------------------------------------------------------------------------------------
// The answers, by request

export const PARLEY = {
  /** GET /messages, /messages/before:{id}, /messages/after:{id}. */
  messagesPage: envelope(arrayOf(message), {
    paging: object(
      {
        before: string({ why: 'iOS String, required; Android isBlank() (null crashes); "" = no older page' }),
        after: string({ why: 'iOS String, required' }),
      },
      { why: 'iOS: required' },
    ),
    agent: orNull(agent),
    stickyMessage: orNull(string({ why: 'iOS: after an after: poll a missing key clears it' })),
    welcomeMessage: orNull(string()),
  }),

  /** GET /messages/{id}. */
  oneMessage: envelope(message),

  /** POST /devices: iOS decodes `data` as its Device (all keys optional, but an object). */
  deviceRegistered: envelope(
    rule(['object'], {
      why: 'iOS decodes data as Device: null, [] or a missing data fail',
      optional: {
        pushToken: string(),
        pushType: integer({ values: [4, 5, 6], why: 'iOS PushType enum' }),
        pushEnabled: rule(['boolean']),
        userAdditionalInformation: object({}),
        type: integer({ values: [1, 2, 3, 4], why: 'iOS DeviceType enum' }),
        version: string(),
        referrer: string(),
      },
    }),
  ),

  /** POST /messages: iOS decodes `data` as a message, Android as `{messageId: Int}`. */
  messageSent: envelope(
    object(
      {
        messageId: rule(['number', 'string'], {
          integer: true,
          min: 1,
          pattern: /^[1-9]\d*$/,
          why: 'Android Int (Gson takes a numeric string), iOS Int or numeric String (else invalidId)',
        }),
      },
      {
        optional: {
          time: integer({ min: 1 }),
          typeId: integer({ min: 1, max: 5 }),
          status: integer({ min: 2, max: 4 }),
        },
      },
    ),
  ),

  /** POST /media. */
  mediaUploaded: envelope(object({ media: string({ why: 'web ow string; Android and iOS String' }) })),

  /** GET /messages/unseen/count: iOS needs both keys. */
  unseenCount: envelope(
    object({
      messageIds: arrayOf(integer({ min: 1 }), { why: 'iOS [Int], required' }),
      count: integer({ min: 0, why: 'iOS Int, required; web and Android read it' }),
    }),
  ),

  /** PUT /messages/status/{n}: read by status only (web: the body status). */
  statusChanged: envelope(anything),

  /** POST /services/event/{name}: read by status only. */
  eventSent: envelope(anything),

  /** Every error: non-2xx, status ERROR, the code first, as an error notification. */
  error: envelope(anything, {}, 'ERROR'),
} as const;

export type AnswerKind = keyof typeof PARLEY;

export interface SeenAnswer {
  status: number;
  contentType: string | null;
  json: unknown;
}

/**
 * Everything a client could not read in one answer: an error is non-2xx (Android, iOS) with
 * `status: "ERROR"` (web) and its code first, as an error notification (web looks at [0] only);
 * a success is 2xx; both are JSON (web refuses other content types) in the schema of `kind`.
 */
export function answerProblems(kind: AnswerKind, answer: SeenAnswer): string[] {
  const problems: string[] = [];
  const isError = kind === 'error';
  const ok = answer.status >= 200 && answer.status < 300;
  if (isError && ok) problems.push(`HTTP ${answer.status} for an error: Android and iOS take any 2xx as success`);
  if (!isError && !ok) problems.push(`HTTP ${answer.status}: Android and iOS take it as a failure`);
  if (!answer.contentType?.includes('application/json')) {
    problems.push(`content-type ${String(answer.contentType)}: web reads only application/json answers`);
  }
  problems.push(...schemaProblems(PARLEY[kind], answer.json, kind));
  if (isError && answer.json && typeof answer.json === 'object') {
    const first = (answer.json as { notifications?: unknown[] }).notifications?.[0];
    problems.push(
      ...schemaProblems(
        object(
          { type: string({ values: ['error'] }), message: string({ pattern: /^[a-z][a-z0-9_]*$/ }) },
          { why: 'web uses notifications[0] only, if its type is "error"' },
        ),
        first,
        'error.notifications[0]',
      ),
    );
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Flat views of the same schema (key → JSON types), for tests that check one level.

function flat(r: Rule): Readonly<Record<string, JsonType[]>> {
  return Object.fromEntries(Object.entries(r.keys ?? {}).map(([key, inner]) => [key, [...inner.types]]));
}

/** The root of a page: the envelope plus paging, the current agent and the account's texts. */
export const MESSAGES_PAGE: Readonly<Record<string, JsonType[]>> = flat(PARLEY.messagesPage);

/** One message of `data`. */
export const MESSAGE: Readonly<Record<string, JsonType[]>> = flat(message);

/** Keys missing from `value` or of a type the clients cannot read, as readable lines. */
export function shapeProblems(value: Record<string, unknown>, shape: Readonly<Record<string, JsonType[]>>, where: string): string[] {
  return Object.entries(shape).flatMap(([key, types]) => {
    if (!(key in value)) return [`${where}.${key} is missing`];
    const actual = jsonType(value[key]);
    return types.includes(actual) ? [] : [`${where}.${key} is ${actual}, clients read ${types.join(' or ')}`];
  });
}
