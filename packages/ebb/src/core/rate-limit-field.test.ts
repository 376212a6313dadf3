import { describe, expect, it } from 'vitest';
import { parseRateLimit } from './rate-limit-field.js';

/*
 * The Structured Field rules (RFC 9651) the RateLimit parser applies, one rule a case. Broader
 * cases (the draft's own examples, malformed fields, a property over arbitrary strings) are in
 * http/rate-limit.test.ts.
 */

const one = (policy: string, remaining: number, windowSeconds?: number) => [{ policy, remaining, windowSeconds }];

describe('parseRateLimit: RFC 9651 whitespace and separators', () => {
  it('skips leading spaces, spaces after ";" (§4.2.3.2), and spaces or tabs around "," (OWS, §4.2.1)', () => {
    expect(parseRateLimit('   "a";r=1')).toEqual(one('a', 1));
    expect(parseRateLimit('"a";  r=1; t=2')).toEqual(one('a', 1, 2));
    expect(parseRateLimit('"a";r=1 ,\t "b";r=2\t')).toEqual([...one('a', 1), ...one('b', 2)]);
  });

  it('needs a comma between members, and no tab where only a space may be', () => {
    for (const bad of ['"a";r=1 "b";r=2', '"a";r=1x"b";r=2', '"a";r=1;"b";r=2', '"a";\tr=1', '\t"a";r=1']) {
      expect(parseRateLimit(bad), bad).toBeUndefined();
    }
  });

  it('reads each member where it stands: two Token policies of the same length stay apart', () => {
    expect(parseRateLimit('a;r=1, b;r=2')).toEqual([...one('a', 1), ...one('b', 2)]);
  });
});

describe('parseRateLimit: sf-string (§4.2.5)', () => {
  it('accepts every printable ASCII character, "~" (0x7E) and " " (0x20) included', () => {
    expect(parseRateLimit('"a ~b";r=1')).toEqual(one('a ~b', 1));
  });

  it('refuses escapes other than \\" and \\\\, control characters, and anything above 0x7E', () => {
    for (const bad of ['"a\\n";r=1', '"a\\";r=1', '"a\tb";r=1', '"a\u001fb";r=1', '"a\u007fb";r=1', '"café";r=1']) {
      expect(parseRateLimit(bad), JSON.stringify(bad)).toBeUndefined();
    }
  });
});

describe('parseRateLimit: the parameters it does not read must still be well-formed', () => {
  it('accepts Integers (negative ones too), Decimals of up to 12 + 3 digits, Dates, Byte Sequences, Booleans', () => {
    for (const ok of [
      'x=-1',
      'x=1.25',
      'x=1.125',
      'x=123456789012.5',
      'x=@1659578233',
      'x=@-1',
      'x=:AQID:',
      'x=?0',
      'x=?1',
      'x',
    ]) {
      expect(parseRateLimit(`"a";r=1;${ok}`), ok).toEqual(one('a', 1));
    }
  });

  it('refuses a Decimal of 13 integer digits, a fractional Date, and keys that are not lower-case', () => {
    for (const bad of ['x=1234567890123.5', 'x=@1.5', 'X=1;r=1', 'R=1;r=1']) {
      expect(parseRateLimit(`"a";r=1;${bad}`), bad).toBeUndefined();
    }
  });

  it('reads a bare item where it starts: junk before a well-formed one is not skipped', () => {
    // Each of these has a valid item further on that a search not anchored at the cursor would find.
    for (const bad of ['r=-;r=1', 'x=?2;y=?1', 'x=:!;y=::', 'x=!b', 'x=!;y=1']) {
      expect(parseRateLimit(`"a";r=1;${bad}`), bad).toBeUndefined();
    }
  });
});
