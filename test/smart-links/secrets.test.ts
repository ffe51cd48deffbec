import { derivedUid } from '../../services/gateway/smart-links/secrets';

describe('derivedUid', () => {
  // Derived ids are stored (event uids of identical submissions, submission ids of repeated
  // deliveries): the same message must give the same id in every version, or a retry that
  // spans an upgrade would make a second event.
  it('gives the ids it has always given', () => {
    expect(derivedUid('app-key', 'evt:1:{}')).toBe('2fQf3cQQWuyTvuiq');
    expect(derivedUid('x', 'y')).toBe('HhMuiTMhntu28vRH');
    expect(derivedUid('k', 'sls:7:msg_2Lq')).toBe('6blXrCuiIP67LKkR');
  });

  it('depends on the key and the message', () => {
    expect(derivedUid('k1', 'm')).not.toBe(derivedUid('k2', 'm'));
    expect(derivedUid('k', 'm1')).not.toBe(derivedUid('k', 'm2'));
  });
});
