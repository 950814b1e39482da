// Rate-limit counts are kept per record id, and ids mean something only within one database:
// two databases sharing a Redis (two deployments, or the test databases of two runs) must not
// count against each other.
import { expect } from 'chai';
import { limitsNamespace } from '../src/limits.ts';

describe('rate-limit keys in Redis', () => {
  it('are namespaced by the database, so databases sharing a Redis never share counts', () => {
    expect(limitsNamespace('postgresql://palaver:secret@db:5432/palaver')).to.equal('palaver:palaver');
    expect(limitsNamespace('postgresql://postgres@127.0.0.1:5432/test_abc')).to.equal('palaver:test_abc');
    expect(limitsNamespace('postgresql://postgres@127.0.0.1:5432/test_abc')).not.to.equal(
      limitsNamespace('postgresql://postgres@127.0.0.1:5432/test_def'),
    );
    expect(limitsNamespace(undefined)).to.equal('palaver:embedded');
  });
});
