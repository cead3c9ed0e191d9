import { CqlLexer, CqlSyntaxError, firstWord, type Token } from './cql-lexer.js';
import { isSystemKeyspace } from './system-keyspaces.js';

export interface TableName {
  readonly keyspace: string | undefined;
  readonly table: string;
}

/**
 * What a statement reads or writes, as far as the proxy must know to keep the real cluster
 * hidden: the table of a SELECT, the tables an INSERT / UPDATE / DELETE / TRUNCATE or a
 * `BEGIN BATCH … APPLY BATCH` writes (a conditional write answers with the row it found, so
 * `UPDATE system.local … IF host_id = …` reads too), or a server-side `DESCRIBE CLUSTER` (which
 * prints the ring). Everything else is `other` and is forwarded. A statement that may touch a
 * system table but does not tokenize is `unreadable`: forwarding it would let Cassandra read what
 * the proxy could not check (`SELECT peer, 4 / 2 FROM system.peers` once did); any other that does
 * not tokenize is `other`, and the backend reports its syntax error.
 */
export type StatementTarget =
  | ({ readonly kind: 'select' } & TableName)
  | { readonly kind: 'modify'; readonly tables: readonly TableName[] }
  | { readonly kind: 'describe-cluster' }
  | { readonly kind: 'unreadable'; readonly message: string }
  | { readonly kind: 'other' };

const WRITES = new Set(['insert', 'update', 'delete', 'truncate', 'begin']);

/** Whether the statement writes (INSERT, UPDATE, DELETE, TRUNCATE, a batch): one of any length may name a system table. */
export const isWriteStatement = (query: string): boolean => WRITES.has(firstWord(query));

/**
 * Cheap, on every QUERY: false when the statement can touch nothing the proxy guards (not a
 * SELECT, a write or DESCRIBE; one that names no system keyspace while the connection's is not
 * one either). Only then is the statement tokenized.
 */
export function mayReadSystem(query: string, keyspace: string | undefined): boolean {
  const word = firstWord(query);
  if (word === 'desc' || word === 'describe') return true;
  return (word === 'select' || WRITES.has(word)) && ((keyspace !== undefined && isSystemKeyspace(keyspace)) || /system/i.test(query));
}

const isWord = (t: Token, word: string) => t.kind === 'identifier' && !t.quoted && t.text === word;
const isSymbol = (t: Token, symbol: string) => t.kind === 'symbol' && t.text === symbol;

function selectTarget(lexer: CqlLexer, keyspace: string | undefined): StatementTarget {
  let depth = 0;
  for (;;) {
    const t = lexer.next();
    if (t.kind === 'end') return { kind: 'other' };
    if (isSymbol(t, '(')) depth++;
    else if (isSymbol(t, ')')) depth--;
    else if (depth === 0 && isWord(t, 'from')) break;
  }
  const first = lexer.next();
  if (first.kind !== 'identifier') return { kind: 'other' };
  if (!isSymbol(lexer.peek(), '.')) return { kind: 'select', keyspace, table: first.text };
  lexer.next();
  const second = lexer.next();
  return second.kind === 'identifier' ? { kind: 'select', keyspace: first.text, table: second.text } : { kind: 'other' };
}

/** `[keyspace.]table` at the lexer, or undefined when no name follows. */
function tableName(lexer: CqlLexer, keyspace: string | undefined): TableName | undefined {
  const first = lexer.peek();
  if (first.kind !== 'identifier') return undefined;
  lexer.next();
  if (!isSymbol(lexer.peek(), '.')) return { keyspace, table: first.text };
  lexer.next();
  const second = lexer.next();
  return second.kind === 'identifier' ? { keyspace: first.text, table: second.text } : undefined;
}

/**
 * Every table a write names: after INSERT INTO, UPDATE, DELETE … FROM and TRUNCATE [TABLE]. These
 * words are reserved in CQL, so unquoted they never name a column or a value; a batch names one
 * table per statement.
 */
function modifyTarget(lexer: CqlLexer, first: Token, keyspace: string | undefined): StatementTarget {
  const tables: TableName[] = [];
  for (let t = first; t.kind !== 'end'; t = lexer.next()) {
    if (t.kind !== 'identifier' || t.quoted) continue;
    if (t.text === 'truncate' && (isWord(lexer.peek(), 'table') || isWord(lexer.peek(), 'columnfamily'))) lexer.next();
    if (t.text === 'into' || t.text === 'update' || t.text === 'from' || t.text === 'truncate') {
      const name = tableName(lexer, keyspace);
      if (name) tables.push(name);
    }
  }
  return { kind: 'modify', tables };
}

/** What `query` reads or writes; `keyspace` is the connection's (USE) or the request's (v5 keyspace flag). */
export function statementTarget(query: string, keyspace: string | undefined): StatementTarget {
  try {
    const lexer = new CqlLexer(query);
    const word = lexer.next();
    if (isWord(word, 'select')) return selectTarget(lexer, keyspace);
    if (word.kind === 'identifier' && !word.quoted && WRITES.has(word.text)) return modifyTarget(lexer, word, keyspace);
    if (isWord(word, 'desc') || isWord(word, 'describe')) {
      if (!isWord(lexer.next(), 'cluster')) return { kind: 'other' };
      const rest = lexer.next();
      return rest.kind === 'end' || isSymbol(rest, ';') ? { kind: 'describe-cluster' } : { kind: 'other' };
    }
    return { kind: 'other' };
  } catch (error) {
    if (!(error instanceof CqlSyntaxError)) throw error;
    if (!mayReadSystem(query, keyspace)) return { kind: 'other' };
    return { kind: 'unreadable', message: `${error.message} at character ${error.at + 1}` };
  }
}
