// Named statement parameters (src/db/named.ts): every value sits where its name is written, so
// a statement's value list cannot be in the wrong order; pieces of SQL carry their own values.
import { expect } from 'chai';
import { named, Sql } from '../src/db/named.ts';

describe('named statement parameters', () => {
  it('puts each value where its name is, repeated names included, and leaves casts alone', () => {
    const { sql, params } = named('select :b::int, :a::text where :b::int > 0', { a: 'x', b: 2 });
    expect(sql).to.equal('select ?::int, ?::text where ?::int > 0');
    expect(params).to.deep.equal([2, 'x', 2]);
  });

  it('splices a piece of SQL in with its values, in their place', () => {
    const piece = named('coalesce(:fallback::int, 0)', { fallback: 7 });
    const inner = new Sql('unnest(?::int[])', ['{1,2}']);
    const { sql, params } = named('select :first::int, :piece, x from :inner as x where x < :last', {
      first: 1,
      piece,
      inner,
      last: 9,
    });
    expect(sql).to.equal('select ?::int, coalesce(?::int, 0), x from unnest(?::int[]) as x where x < ?');
    expect(params).to.deep.equal([1, 7, '{1,2}', 9]);
  });

  it('refuses a missing name, a value whose name is not in the statement, and a positional ?', () => {
    expect(() => named('select :a', {})).to.throw('no value for :a');
    expect(() => named('select :a', { a: 1, b: 2 })).to.throw(':b is not in the statement');
    expect(() => named('select ?', {})).to.throw('use :names');
  });
});
