/**
 * The `RateLimit` response field of the IETF draft "RateLimit header fields for HTTP"
 * (draft-ietf-httpapi-ratelimit-headers, revisions 08 to 11): a Structured Field List
 * (RFC 9651 §3.1) of service-limit items, one per quota policy, such as
 *
 *     RateLimit: "default";r=50;t=30
 *
 * `r` (required) is the quota still available, `t` (optional) the effective window in seconds:
 * "the number of seconds within which the client can use no more than the available quota"
 * (draft §4.1.2). Both are non-negative Integers. "Malformed RateLimit header fields MUST be
 * ignored" (draft §7): one bad member discards the whole field, and so does an Inner List.
 */

/** One service-limit item of a `RateLimit` field. */
export interface RateLimitItem {
  /** The policy's identifier (a String in draft 11, a Token in earlier drafts). */
  readonly policy: string;
  /** `r`: the available quota, in quota units. */
  readonly remaining: number;
  /** `t`: the effective window, in seconds; undefined when the server left it out. */
  readonly windowSeconds: number | undefined;
}

type Bare = string | number | boolean | Uint8Array | { token: string };

/** A cursor over a field value; every parse step either advances it or throws `Malformed`. */
class Malformed extends Error {}

class Reader {
  i = 0;
  constructor(readonly s: string) {}

  get done(): boolean {
    return this.i >= this.s.length;
  }

  peek(): string {
    // Stryker disable next-line StringLiteral: past the end, any string no parse step accepts does.
    return this.s[this.i] ?? '';
  }

  skipSpaces(): void {
    while (this.peek() === ' ') this.i++;
  }

  skipOws(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.i++;
  }

  expect(c: string): void {
    if (this.peek() !== c) throw new Malformed();
    this.i++;
  }

  // RFC 9651 §4.2.3.1: sf-string = DQUOTE *( unescaped / "%" / bs-escaped ) DQUOTE
  string(): string {
    this.expect('"');
    let out = '';
    for (;;) {
      const c = this.s[this.i++];
      if (c === undefined) throw new Malformed();
      if (c === '\\') {
        const next = this.s[this.i++];
        if (next !== '"' && next !== '\\') throw new Malformed();
        out += next;
      } else if (c === '"') return out;
      else {
        const code = c.charCodeAt(0);
        if (code < 0x20 || code > 0x7e) throw new Malformed();
        out += c;
      }
    }
  }

  // RFC 9651 §4.2.4: at most 15 integer digits; a decimal has at most 12 + 3.
  number(): number {
    const m = /^-?(\d{1,15})(\.\d{1,3})?/.exec(this.s.slice(this.i));
    if (!m) throw new Malformed();
    const [text, whole, fraction] = m as unknown as [string, string, string | undefined];
    if (fraction !== undefined && whole.length > 12) throw new Malformed();
    this.i += text.length;
    return Number(text);
  }

  token(): string {
    const m = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/.exec(this.s.slice(this.i));
    if (!m) throw new Malformed();
    this.i += m[0].length;
    return m[0];
  }

  key(): string {
    const m = /^[a-z*][a-z0-9_\-.*]*/.exec(this.s.slice(this.i));
    if (!m) throw new Malformed();
    this.i += m[0].length;
    return m[0];
  }

  bare(): Bare {
    const c = this.peek();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    if (c === '"') return this.string();
    if (c === ':') {
      const m = /^:([A-Za-z0-9+/=]*):/.exec(this.s.slice(this.i));
      if (!m) throw new Malformed();
      this.i += m[0].length;
      return new Uint8Array(0); // the bytes are never needed here
    }
    if (c === '?') {
      const m = /^\?[01]/.exec(this.s.slice(this.i));
      if (!m) throw new Malformed();
      this.i += 2;
      // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: no Boolean's value is read.
      return m[0] === '?1';
    }
    if (c === '@') {
      this.i++;
      const n = this.number();
      if (!Number.isInteger(n)) throw new Malformed();
      return n;
    }
    if (c === '%') {
      this.i++;
      return this.string();
    }
    return { token: this.token() };
  }

  parameters(): Map<string, Bare> {
    const params = new Map<string, Bare>();
    while (this.peek() === ';') {
      this.i++;
      this.skipSpaces();
      const key = this.key();
      // Stryker disable next-line BooleanLiteral: a parameter without a value is a Boolean, and no Boolean is a valid r or t.
      let value: Bare = true;
      if (this.peek() === '=') {
        this.i++;
        value = this.bare();
      }
      params.set(key, value);
    }
    return params;
  }
}

// Number.isInteger is false for every non-number: no typeof check needed.
const nonNegativeInteger = (v: Bare | undefined): v is number => Number.isInteger(v) && (v as number) >= 0;

/**
 * Parses a `RateLimit` field value into its items, or undefined if it is absent or malformed
 * (then it must be ignored as a whole). Several `RateLimit` fields in one response arrive
 * joined by ", " from `Headers.get()`, which is the same List.
 *
 * @example
 * parseRateLimit('"default";r=50;t=30');  // [{ policy: 'default', remaining: 50, windowSeconds: 30 }]
 * parseRateLimit('"default";r=-1');       // undefined: r must be non-negative
 */
export function parseRateLimit(value: string | null | undefined): RateLimitItem[] | undefined {
  if (typeof value !== 'string') return undefined;
  const r = new Reader(value);
  const items: RateLimitItem[] = [];
  try {
    r.skipSpaces();
    // An empty field, an Inner List ("(") and a trailing comma all fail the parse of a member
    // below: no bare item starts with "(" or with nothing.
    for (;;) {
      const item = r.bare();
      const policy = typeof item === 'string' ? item : typeof item === 'object' && 'token' in item ? item.token : null;
      if (policy === null) throw new Malformed();
      const params = r.parameters();
      const remaining = params.get('r');
      const window = params.get('t');
      if (!nonNegativeInteger(remaining)) throw new Malformed();
      if (window !== undefined && !nonNegativeInteger(window)) throw new Malformed();
      items.push({ policy, remaining, windowSeconds: window });
      r.skipOws();
      if (r.done) return items;
      r.expect(',');
      r.skipOws();
    }
  } catch (error) {
    if (error instanceof Malformed) return undefined;
    throw error;
  }
}
