// Statements with named parameters: `:name` in the text, the values by name beside it, turned
// into the `?` placeholders and value list that execute() and prepared() take. A value sits
// where its name is written, so no list of values has to follow an order only a comment states.
// A value may itself be SQL (another named() piece, with its own values): it is spliced in, its
// values in their place. `::type` casts are not names; a name must be given, and every given
// name used, or the builder throws (a misspelt name fails at its first run, not with wrong rows).

/** SQL text with `?` placeholders and their values, in order. */
export class Sql {
  constructor(
    readonly sql: string,
    readonly params: unknown[],
  ) {}
}

/** A name: `:` after neither a word character nor another `:` (so `x::int` is a cast). */
const NAME = /(?<![\w:]):([A-Za-z_]\w*)/g;

/** The text split at its names, once per text (statements are constants). */
interface Parsed {
  pieces: string[];
  names: string[];
  known: Set<string>;
}

const parsed = new Map<string, Parsed>();

function parse(text: string): Parsed {
  let found = parsed.get(text);
  if (!found) {
    if (text.includes('?')) throw new Error(`named(): use :names, not ?, in ${text.slice(0, 80)}`);
    const pieces: string[] = [];
    const names: string[] = [];
    let last = 0;
    for (const match of text.matchAll(NAME)) {
      pieces.push(text.slice(last, match.index));
      names.push(match[1] as string);
      last = match.index + match[0].length;
    }
    pieces.push(text.slice(last));
    found = { pieces, names, known: new Set(names) };
    parsed.set(text, found);
  }
  return found;
}

export function named(text: string, values: Readonly<Record<string, unknown>> = {}): Sql {
  const { pieces, names, known } = parse(text);
  const params: unknown[] = [];
  let sql = pieces[0] as string;
  for (let i = 0; i < names.length; i += 1) {
    const name = names[i] as string;
    const value = values[name];
    if (value === undefined && !(name in values)) throw new Error(`named(): no value for :${name}`);
    if (value instanceof Sql) {
      sql += value.sql;
      for (const param of value.params) params.push(param);
    } else {
      sql += '?';
      params.push(value);
    }
    sql += pieces[i + 1] as string;
  }
  for (const name in values) {
    if (!known.has(name)) throw new Error(`named(): :${name} is not in the statement`);
  }
  return new Sql(sql, params);
}
