/**
 * A CQL tokenizer for the few statements drivers send to the system tables. It scans lazily, so
 * `isSystemTableQuery` can stop at the table name of any statement, however long the rest is.
 * Identifiers are normalised as CQL does: unquoted ones to lower case, quoted ones kept exactly
 * (with `""` read as `"`).
 */

export type Token =
  | { readonly kind: 'identifier'; readonly text: string; readonly quoted: boolean; readonly at: number }
  | { readonly kind: 'string'; readonly value: string; readonly at: number }
  | { readonly kind: 'integer' | 'float' | 'duration' | 'uuid' | 'blob'; readonly text: string; readonly at: number }
  | { readonly kind: 'marker'; readonly at: number }
  | { readonly kind: 'named-marker'; readonly name: string; readonly at: number }
  | { readonly kind: 'symbol'; readonly text: string; readonly at: number }
  | { readonly kind: 'end'; readonly at: number };

export class CqlSyntaxError extends Error {
  readonly at: number;
  constructor(message: string, at: number) {
    super(message);
    this.name = new.target.name;
    this.at = at;
  }
}

const UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\w-])/y;
const BLOB = /0[xX][0-9a-fA-F]*(?!\w)/y;
const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;
const DURATION_TAIL = /(\d+(y|mo|w|d|h|ms|m|s|us|µs|ns))*(?!\w)/iy;
const IDENTIFIER = /[a-zA-Z][a-zA-Z0-9_]*/y;
const SYMBOLS = ['<=', '>=', '!=', '=', '<', '>', '*', ',', '(', ')', '.', ';', '+', '-', '[', ']', '{', '}', ':', '?', '/', '%'];

function match(re: RegExp, text: string, at: number): string | undefined {
  re.lastIndex = at;
  return re.exec(text)?.[0];
}

export class CqlLexer {
  readonly #text: string;
  #at = 0;
  #peeked: Token | undefined;

  constructor(text: string) {
    this.#text = text;
  }

  peek(): Token {
    this.#peeked ??= this.#scan();
    return this.#peeked;
  }

  next(): Token {
    const t = this.peek();
    this.#peeked = undefined;
    return t;
  }

  #skipSpaceAndComments(): void {
    const s = this.#text;
    for (;;) {
      while (this.#at < s.length && /\s/.test(s[this.#at] ?? '')) this.#at++;
      if (s.startsWith('--', this.#at) || s.startsWith('//', this.#at)) {
        const eol = lineEnd(s, this.#at);
        this.#at = eol < 0 ? s.length : eol + 1;
      } else if (s.startsWith('/*', this.#at)) {
        const close = s.indexOf('*/', this.#at + 2);
        if (close < 0) throw new CqlSyntaxError('unterminated /* comment', this.#at);
        this.#at = close + 2;
      } else return;
    }
  }

  #quoted(quote: string): string {
    const s = this.#text;
    const start = this.#at;
    let out = '';
    let i = start + 1;
    for (;;) {
      const close = s.indexOf(quote, i);
      if (close < 0) throw new CqlSyntaxError(`unterminated ${quote === "'" ? 'string' : 'quoted identifier'}`, start);
      out += s.slice(i, close);
      if (s[close + 1] === quote) {
        out += quote;
        i = close + 2;
      } else {
        this.#at = close + 1;
        return out;
      }
    }
  }

  #scan(): Token {
    this.#skipSpaceAndComments();
    const s = this.#text;
    const at = this.#at;
    if (at >= s.length) return { kind: 'end', at };
    const c = s[at] ?? '';
    if (c === "'") return { kind: 'string', value: this.#quoted("'"), at };
    if (c === '"') {
      const text = this.#quoted('"');
      if (text === '') throw new CqlSyntaxError('empty quoted identifier', at);
      return { kind: 'identifier', text, quoted: true, at };
    }
    if (s.startsWith('$$', at)) {
      const close = s.indexOf('$$', at + 2);
      if (close < 0) throw new CqlSyntaxError('unterminated $$ string', at);
      this.#at = close + 2;
      return { kind: 'string', value: s.slice(at + 2, close), at };
    }
    // Longest forms first: a uuid or blob literal starts like a number or an identifier.
    for (const [kind, re] of [
      ['uuid', UUID],
      ['blob', BLOB],
    ] as const) {
      const m = match(re, s, at);
      if (m !== undefined) {
        this.#at += m.length;
        return { kind, text: m, at };
      }
    }
    const number = match(NUMBER, s, at);
    if (number !== undefined) {
      this.#at += number.length;
      if (/^-?\d+$/.test(number) && /[a-zµ]/i.test(s[this.#at] ?? '')) {
        // `500ms`, `1h30m`: a duration literal (USING TIMEOUT), digits then unit, repeated.
        const unit = match(/(y|mo|w|d|h|ms|m|s|us|µs|ns)/iy, s, this.#at) ?? '';
        const tail = match(DURATION_TAIL, s, this.#at + unit.length);
        if (unit === '' || tail === undefined) throw new CqlSyntaxError(`bad duration literal starting ${number}`, at);
        this.#at += unit.length + tail.length;
        return { kind: 'duration', text: s.slice(at, this.#at), at };
      }
      if (/^\w/.test(s[this.#at] ?? '')) throw new CqlSyntaxError(`unexpected character after ${number}`, this.#at);
      return { kind: /[.eE]/.test(number) ? 'float' : 'integer', text: number, at };
    }
    const word = match(IDENTIFIER, s, at);
    if (word !== undefined) {
      this.#at += word.length;
      return { kind: 'identifier', text: word.toLowerCase(), quoted: false, at };
    }
    if (c === ':' && (s[at + 1] === '"' || /[a-zA-Z]/.test(s[at + 1] ?? ''))) {
      this.#at++;
      const name = this.#scan();
      if (name.kind !== 'identifier') throw new CqlSyntaxError('bad bind marker name', at);
      return { kind: 'named-marker', name: name.text, at };
    }
    if (c === '?') {
      this.#at++;
      return { kind: 'marker', at };
    }
    const symbol = SYMBOLS.find((sym) => s.startsWith(sym, at));
    if (symbol === undefined) throw new CqlSyntaxError(`unexpected character ${JSON.stringify(c)}`, at);
    this.#at += symbol.length;
    return { kind: 'symbol', text: symbol, at };
  }
}

/**
 * Where a `--` or `//` comment starting at `from` ends: at the first line feed or carriage return,
 * as in Cassandra's lexer (`('--' | '//') .* ('\n' | '\r')`). Ended at the line feed only, a
 * comment closed by a lone `\r` hid the rest of the statement from the proxy but not from Cassandra:
 * `SELECT peer FROM -- x\rsystem.peers` was forwarded and answered with the real peers. -1: none.
 */
function lineEnd(text: string, from: number): number {
  // One pass: two indexOf calls would each scan to the end when one of the two is absent, for every
  // comment (a statement of many short comments would cost its length squared).
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return i;
  }
  return -1;
}

/** How a token reads in an error message. */
export function describeToken(t: Token): string {
  switch (t.kind) {
    case 'end':
      return 'end of statement';
    case 'identifier':
      return t.quoted ? `"${t.text}"` : t.text;
    case 'string':
      return `'${t.value}'`;
    case 'marker':
      return '?';
    case 'named-marker':
      return `:${t.name}`;
    default:
      return t.text;
  }
}

/**
 * The statement's first word, lower case, after any leading space and comments. A loop, not a
 * regex: a pattern with a repeated group of lazy comment alternatives backtracks exponentially on
 * input such as many `/**\/` followed by anything else, and this runs on every statement.
 */
export function firstWord(query: string): string {
  let i = 0;
  for (;;) {
    while (i < query.length && /\s/.test(query[i] ?? '')) i++;
    if (query.startsWith('--', i) || query.startsWith('//', i)) {
      const eol = lineEnd(query, i);
      if (eol < 0) return '';
      i = eol + 1;
    } else if (query.startsWith('/*', i)) {
      const close = query.indexOf('*/', i + 2);
      if (close < 0) return '';
      i = close + 2;
    } else break;
  }
  let end = i;
  while (end < query.length && /\w/.test(query[end] ?? '')) end++;
  return query.slice(i, end).toLowerCase();
}
