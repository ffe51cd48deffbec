import { trimEndOf, trimStartOf } from '../../shared/text/trim';
import { cpuMsOf } from '../helpers/cpu';

describe('trimming a run of characters off one end', () => {
  it('takes the whole run and nothing else', () => {
    expect(trimEndOf('https://x.test/a?b.,;!', /[.,;:!?]/)).toBe('https://x.test/a?b');
    expect(trimEndOf('...', /\./)).toBe('');
    expect(trimEndOf('a.b', /\./)).toBe('a.b');
    expect(trimStartOf(' ,;- The Loft -', /[\s,;:-]/)).toBe('The Loft -');
    expect(trimStartOf('', /\s/)).toBe('');
  });

  it('reads a long run once, whatever follows it', () => {
    // /[.]+$/ on this took over a minute: each dot before the x began an attempt that read up to it.
    const run = `${'.'.repeat(200_000)}x${'.'.repeat(200_000)}`;
    expect(cpuMsOf(() => expect(trimEndOf(run, /\./)).toHaveLength(200_001))).toBeLessThan(500);
  });
});
