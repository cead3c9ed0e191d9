import { CqlLexer, CqlSyntaxError, describeToken, firstWord, type Token } from './cql-lexer.js';
import type { Argument, FunctionCall } from './system-functions.js';

/**
 * The statements drivers send to the system tables, parsed so the proxy can answer them itself:
 *
 *   SELECT <selectors> FROM [system.]local|peers|peers_v2
 *     [WHERE <relation> [AND <relation> ...]] [LIMIT <n | ?>] [ALLOW FILTERING]
 *     [USING TIMEOUT <duration | ?>] [;]
 *
 * where a relation is `<column> = <value>`, `<column> IN (<value>, ...)` or `<column> IN ?`, a value a
 * literal, `?` or `:name`; and selectors `*`, columns, `name AS alias`, `count(*)` / `count(1)` /
 * `count(column)`.
 * Anything else aimed at these tables is refused with a message for a CQL `INVALID` error, never
 * forwarded: the backend's answer would name the real nodes.
 */

export type SystemTableName = 'local' | 'peers' | 'peers_v2';
export const SYSTEM_TABLES: readonly SystemTableName[] = ['local', 'peers', 'peers_v2'];

export type Literal =
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'integer' | 'float' | 'uuid' | 'blob' | 'duration'; readonly text: string }
  | { readonly type: 'boolean'; readonly value: boolean }
  | { readonly type: 'null' };

/** A value in the statement: written out, or the `index`-th bind marker. */
export type Term = { readonly kind: 'literal'; readonly literal: Literal } | { readonly kind: 'marker'; readonly index: number };

/**
 * A bind marker, in statement order. `name` is what a client binding by name must use: the
 * marker's own name for `:name`, else the name Cassandra gives it (the column for a relation,
 * `in(column)` for `column IN ?`, `[limit]`, `[timeout]`).
 */
export interface BindMarker {
  readonly index: number;
  readonly name: string;
  readonly named: boolean;
  readonly receiver:
    | { readonly kind: 'column'; readonly column: string }
    /** The whole IN list, bound as one list value. */
    | { readonly kind: 'in'; readonly column: string }
    | { readonly kind: 'limit' }
    | { readonly kind: 'timeout' };
}

export type Selector =
  | { readonly kind: 'column'; readonly column: string; readonly alias?: string }
  /** A native function such as now() or toJson(column) (see system-functions.ts). */
  | { readonly kind: 'call'; readonly call: FunctionCall; readonly alias?: string }
  /** `column` undefined counts rows (`count(*)`, `count(1)`). */
  | { readonly kind: 'count'; readonly column?: string; readonly alias?: string };

/** `column = value`, `column IN (values...)`, or `column IN ?` (`inList`: one marker bound to the whole list). */
export type Relation =
  | { readonly column: string; readonly value: Term }
  | { readonly column: string; readonly in: readonly Term[] }
  | { readonly column: string; readonly inList: Term };

export interface SystemQuery {
  readonly table: SystemTableName;
  /** undefined for `SELECT *`. */
  readonly selectors?: readonly Selector[];
  readonly where: readonly Relation[];
  readonly limit?: Term;
  readonly allowFiltering: boolean;
  readonly timeout?: Term;
  readonly markers: readonly BindMarker[];
}

export type ParsedSystemQuery = { readonly ok: true; readonly query: SystemQuery } | { readonly ok: false; readonly message: string };

class Unsupported extends Error {}

const isWord = (t: Token, word: string) => t.kind === 'identifier' && !t.quoted && t.text === word;
const isSymbol = (t: Token, symbol: string) => t.kind === 'symbol' && t.text === symbol;

/**
 * Reads `[keyspace.]table` after FROM and says whether it is one of ours. `keyspace` is the
 * statement's keyspace (the connection's `USE`, or a v5 keyspace flag), as the server names it.
 */
function readTable(lexer: CqlLexer, keyspace: string | undefined): { table?: SystemTableName; shown: string } {
  const first = lexer.next();
  if (first.kind !== 'identifier') return { shown: describeToken(first) };
  let ks = keyspace;
  let name = first.text;
  let shown = describeToken(first);
  if (isSymbol(lexer.peek(), '.')) {
    lexer.next();
    const second = lexer.next();
    if (second.kind !== 'identifier') return { shown };
    ks = first.text;
    name = second.text;
    shown += `.${describeToken(second)}`;
  }
  const table = ks === 'system' ? SYSTEM_TABLES.find((t) => t === name) : undefined;
  return table !== undefined ? { table, shown } : { shown };
}

/** Skips the selectors (parentheses included) and FROM; false if the statement is not a SELECT with a FROM. */
function skipToTable(lexer: CqlLexer): boolean {
  if (!isWord(lexer.next(), 'select')) return false;
  let depth = 0;
  for (;;) {
    const t = lexer.next();
    if (t.kind === 'end') return false;
    if (isSymbol(t, '(')) depth++;
    else if (isSymbol(t, ')')) depth--;
    else if (depth === 0 && isWord(t, 'from')) return true;
  }
}

const MENTIONS_TABLE = /local|peers/i;

const startsWithSelect = (query: string): boolean => firstWord(query) === 'select';

/**
 * Whether `query` reads system.local, system.peers or system.peers_v2. This runs on every QUERY
 * and PREPARE, so it rejects cheaply first (not a SELECT, checked at the start only; then neither word anywhere) and tokenizes
 * only as far as the table name. A statement that does not even tokenize that far is not ours:
 * it goes to the backend, which reports the syntax error.
 */
export function isSystemTableQuery(query: string, keyspace?: string): boolean {
  if (!startsWithSelect(query) || !MENTIONS_TABLE.test(query)) return false;
  try {
    const lexer = new CqlLexer(query);
    return skipToTable(lexer) && readTable(lexer, keyspace).table !== undefined;
  } catch (error) {
    if (error instanceof CqlSyntaxError) return false;
    throw error;
  }
}

class Parser {
  readonly #lexer: CqlLexer;
  readonly #markers: BindMarker[] = [];

  constructor(lexer: CqlLexer) {
    this.#lexer = lexer;
  }

  #expectWord(word: string): void {
    const t = this.#lexer.next();
    if (!isWord(t, word)) throw new CqlSyntaxError(`expected ${word.toUpperCase()} but found ${describeToken(t)}`, t.at);
  }

  #identifier(what: string): string {
    const t = this.#lexer.next();
    if (t.kind !== 'identifier') throw new CqlSyntaxError(`expected ${what} but found ${describeToken(t)}`, t.at);
    return t.text;
  }

  #marker(token: Token, receiver: BindMarker['receiver']): Term {
    const index = this.#markers.length;
    const implicit =
      receiver.kind === 'column' ? receiver.column : receiver.kind === 'in' ? `in(${receiver.column})` : `[${receiver.kind}]`;
    const named = token.kind === 'named-marker';
    this.#markers.push({ index, name: named ? token.name : implicit, named, receiver });
    return { kind: 'marker', index };
  }

  selectors(): readonly Selector[] | undefined {
    const lexer = this.#lexer;
    const first = lexer.peek();
    if (isWord(first, 'json') || isWord(first, 'distinct')) throw new Unsupported(`SELECT ${describeToken(first).toUpperCase()}`);
    if (isSymbol(first, '*')) {
      lexer.next();
      return undefined;
    }
    const out: Selector[] = [];
    for (;;) {
      out.push(this.selector());
      if (!isSymbol(lexer.peek(), ',')) return out;
      lexer.next();
    }
  }

  selector(): Selector {
    const lexer = this.#lexer;
    const t = lexer.next();
    if (t.kind !== 'identifier') {
      throw t.kind === 'end' || t.kind === 'symbol'
        ? new CqlSyntaxError(`expected a selector but found ${describeToken(t)}`, t.at)
        : new Unsupported(`the selector ${describeToken(t)}`);
    }
    let selector: Selector;
    if (isSymbol(lexer.peek(), '(') || (isWord(t, 'system') && isSymbol(lexer.peek(), '.'))) {
      if (t.quoted || t.text !== 'count') selector = { kind: 'call', call: this.call(t) };
      else selector = this.count();
    } else {
      selector = { kind: 'column', column: t.text };
    }
    if (isWord(lexer.peek(), 'as')) {
      lexer.next();
      return { ...selector, alias: this.#identifier('an alias after AS') };
    }
    const next = lexer.peek();
    if (!isSymbol(next, ',') && !isWord(next, 'from')) throw new Unsupported(`the selector expression at ${describeToken(next)}`);
    return selector;
  }

  /** `count(*)`, `count(1)` or `count(column)`, after the name. */
  count(): Selector {
    const lexer = this.#lexer;
    lexer.next(); // (
    const arg = lexer.next();
    let selector: Selector;
    if (isSymbol(arg, '*') || (arg.kind === 'integer' && arg.text === '1')) selector = { kind: 'count' };
    else if (arg.kind === 'identifier') selector = { kind: 'count', column: arg.text };
    else throw new Unsupported(`count(${describeToken(arg)})`);
    const close = lexer.next();
    if (!isSymbol(close, ')')) throw new CqlSyntaxError(`expected ) but found ${describeToken(close)}`, close.at);
    return selector;
  }

  /** A function call whose name (or `system`, of `system.name`) is `first`. */
  call(first: Token): FunctionCall {
    const lexer = this.#lexer;
    let name = first.kind === 'identifier' ? first.text : '';
    if (isSymbol(lexer.peek(), '.')) {
      lexer.next();
      name = this.#identifier('a function name after system.');
    }
    const open = lexer.next();
    if (!isSymbol(open, '(')) throw new CqlSyntaxError(`expected ( after ${name} but found ${describeToken(open)}`, open.at);
    const args: Argument[] = [];
    if (isSymbol(lexer.peek(), ')')) lexer.next();
    else
      for (;;) {
        const t = lexer.next();
        if (t.kind !== 'identifier') throw new Unsupported(`the function argument ${describeToken(t)}`);
        const nested = isSymbol(lexer.peek(), '(') || (isWord(t, 'system') && isSymbol(lexer.peek(), '.'));
        args.push(nested ? { kind: 'call', call: this.call(t) } : { kind: 'column', column: t.text });
        const after = lexer.next();
        if (isSymbol(after, ')')) break;
        if (!isSymbol(after, ','))
          throw new CqlSyntaxError(`expected , or ) in the arguments of ${name} but found ${describeToken(after)}`, after.at);
      }
    return { name, args };
  }

  term(receiver: BindMarker['receiver']): Term {
    const t = this.#lexer.next();
    switch (t.kind) {
      case 'marker':
      case 'named-marker':
        return this.#marker(t, receiver);
      case 'string':
        return { kind: 'literal', literal: { type: 'string', value: t.value } };
      case 'integer':
      case 'float':
      case 'uuid':
      case 'blob':
      case 'duration':
        return { kind: 'literal', literal: { type: t.kind, text: t.text } };
      case 'identifier':
        if (!t.quoted && (t.text === 'true' || t.text === 'false'))
          return { kind: 'literal', literal: { type: 'boolean', value: t.text === 'true' } };
        if (!t.quoted && t.text === 'null') return { kind: 'literal', literal: { type: 'null' } };
        throw new Unsupported(`the term ${describeToken(t)}`);
      case 'end':
        throw new CqlSyntaxError('the statement ends where a value was expected', t.at);
      default:
        throw new Unsupported(`the term ${describeToken(t)}`);
    }
  }

  relations(): Relation[] {
    const out: Relation[] = [];
    for (;;) {
      const column = this.#lexer.next();
      if (column.kind !== 'identifier') throw new Unsupported(`the relation starting at ${describeToken(column)}`);
      const op = this.#lexer.next();
      if (isWord(op, 'in')) out.push(this.inRelation(column.text));
      else if (!isSymbol(op, '=')) throw new Unsupported(`the relation "${describeToken(column)} ${describeToken(op)} ..."`);
      else if (isSymbol(this.#lexer.peek(), '(')) throw new Unsupported('a tuple or function call in a relation');
      else out.push({ column: column.text, value: this.term({ kind: 'column', column: column.text }) });
      if (!isWord(this.#lexer.peek(), 'and')) return out;
      this.#lexer.next();
    }
  }

  inRelation(column: string): Relation {
    const lexer = this.#lexer;
    const open = lexer.peek();
    if (open.kind === 'marker' || open.kind === 'named-marker') return { column, inList: this.term({ kind: 'in', column }) };
    if (!isSymbol(lexer.next(), '('))
      throw new CqlSyntaxError(`expected ( or a bind marker after IN but found ${describeToken(open)}`, open.at);
    const terms: Term[] = [];
    if (isSymbol(lexer.peek(), ')')) lexer.next();
    else
      for (;;) {
        terms.push(this.term({ kind: 'column', column }));
        const t = lexer.next();
        if (isSymbol(t, ')')) break;
        if (!isSymbol(t, ',')) throw new CqlSyntaxError(`expected , or ) in the IN list but found ${describeToken(t)}`, t.at);
      }
    return { column, in: terms };
  }

  rest(table: SystemTableName, selectors: readonly Selector[] | undefined): SystemQuery {
    const lexer = this.#lexer;
    let where: Relation[] = [];
    let limit: Term | undefined;
    let timeout: Term | undefined;
    let allowFiltering = false;
    if (isWord(lexer.peek(), 'where')) {
      lexer.next();
      where = this.relations();
    }
    // The trailing clauses are taken in any order, each once: drivers and tools differ in the order they write them.
    const seen = new Set<string>();
    for (;;) {
      const t = lexer.next();
      if (t.kind === 'end' || isSymbol(t, ';')) {
        const after = lexer.next();
        if (after.kind !== 'end') throw new CqlSyntaxError(`unexpected ${describeToken(after)} after the statement`, after.at);
        break;
      }
      const clause = t.kind === 'identifier' && !t.quoted ? t.text : '';
      if (seen.has(clause)) throw new CqlSyntaxError(`${clause.toUpperCase()} given twice`, t.at);
      seen.add(clause);
      if (clause === 'limit') limit = this.term({ kind: 'limit' });
      else if (clause === 'allow') {
        this.#expectWord('filtering');
        allowFiltering = true;
      } else if (clause === 'using') {
        this.#expectWord('timeout');
        timeout = this.term({ kind: 'timeout' });
      } else if (clause === 'group' || clause === 'order' || clause === 'per' || clause === 'bypass') {
        throw new Unsupported(
          `${clause.toUpperCase()} ${lexer.peek().kind === 'identifier' ? describeToken(lexer.peek()).toUpperCase() : ''}`.trim(),
        );
      } else throw new CqlSyntaxError(`unexpected ${describeToken(t)}`, t.at);
    }
    return {
      table,
      ...(selectors !== undefined ? { selectors } : {}),
      where,
      ...(limit !== undefined ? { limit } : {}),
      allowFiltering,
      ...(timeout !== undefined ? { timeout } : {}),
      markers: this.#markers,
    };
  }
}

const SUPPORTED =
  'the proxy answers system.local, system.peers and system.peers_v2 itself and supports SELECT with *, columns, aliases, count(*) ' +
  'and the functions now(), uuid(), currentTimestamp(), toTimestamp(), toJson() and the like, ' +
  'WHERE column = value or column IN (...) [AND ...], LIMIT, ALLOW FILTERING and USING TIMEOUT';

/**
 * Parses a statement for which {@link isSystemTableQuery} said true. Failures come back as a
 * message for an `INVALID` error; nothing here throws on bad input.
 */
export function parseSystemQuery(query: string, keyspace?: string): ParsedSystemQuery {
  let table: SystemTableName | undefined;
  try {
    // A first pass finds the table, so every later message can name it.
    const scout = new CqlLexer(query);
    if (!skipToTable(scout)) return { ok: false, message: `Not a SELECT ... FROM a system table; ${SUPPORTED}` };
    const target = readTable(scout, keyspace);
    if (target.table === undefined) return { ok: false, message: `${target.shown} is not system.local, system.peers or system.peers_v2` };
    table = target.table;
    const lexer = new CqlLexer(query);
    const parser = new Parser(lexer);
    lexer.next(); // SELECT
    const selectors = parser.selectors();
    const from = lexer.next();
    if (!isWord(from, 'from')) throw new CqlSyntaxError(`expected FROM but found ${describeToken(from)}`, from.at);
    readTable(lexer, keyspace);
    return { ok: true, query: parser.rest(table, selectors) };
  } catch (error) {
    const where = table !== undefined ? ` on system.${table}` : '';
    if (error instanceof Unsupported) return { ok: false, message: `${error.message} is not supported${where}; ${SUPPORTED}` };
    if (error instanceof CqlSyntaxError)
      return { ok: false, message: `Syntax error${where} at character ${error.at + 1}: ${error.message}` };
    throw error;
  }
}
