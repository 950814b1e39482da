// The sealed cookie of a single sign-on under way: it opens only unchanged, with its key, in time.
import { expect } from 'chai';
import { seal, sealingKey, unseal } from '../src/security/sealed.ts';

describe('sealed values', () => {
  const key = sealingKey('a client secret long enough', 'sso attempt cookie');
  const attempt = { state: 's', nonce: 'n', verifier: 'v' };

  it('opens with its key, and shows nothing of the value in between', () => {
    const sealed = seal(key, attempt, 600);
    expect(unseal(key, sealed)).to.deep.equal(attempt);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.to.include('verifier');
  });

  it('refuses a changed byte, another key or label, an expired value and garbage', () => {
    const sealed = Buffer.from(seal(key, attempt, 600), 'base64url');
    for (let at = 0; at < sealed.length; at += 7) {
      const changed = Buffer.from(sealed);
      changed[at] = (changed[at] ?? 0) ^ 1;
      expect(unseal(key, changed.toString('base64url')), `byte ${at}`).to.equal(null);
    }
    expect(unseal(sealingKey('another client secret entirely', 'sso attempt cookie'), sealed.toString('base64url'))).to.equal(null);
    expect(unseal(sealingKey('a client secret long enough', 'another purpose'), sealed.toString('base64url'))).to.equal(null);
    expect(unseal(key, seal(key, attempt, -1))).to.equal(null);
    expect(unseal(key, 'not sealed at all')).to.equal(null);
    expect(unseal(key, '')).to.equal(null);
  });
});
