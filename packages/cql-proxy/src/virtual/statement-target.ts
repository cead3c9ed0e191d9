import { CqlLexer, CqlSyntaxError, firstWord, type Token } from './cql-lexer.js';
import { isSystemKeyspace } from './system-keyspaces.js';

/**
 * What a statement reads, as far as the proxy must know to keep the real cluster hidden: the
 * table of a SELECT, or a server-side `DESCRIBE CLUSTER` (which prints the ring). Everything else
 * is `other` and is forwarded; a statement that does not tokenize is `other` too, and the backend
 * reports its syntax error.
 */
export type StatementTarget =
  | { readonly kind: 'select'; readonly keyspace: string | undefined; readonly table: string }
  | { readonly kind: 'describe-cluster' }
  | { readonly kind: 'other' };

/**
 * Cheap, on every QUERY and PREPARE: false when the statement can read nothing the proxy guards
 * (not a SELECT or DESCRIBE; a SELECT that names no system keyspace while the connection's is not
 * one either). Only then is the statement tokenized.
 */
export function mayReadSystem(query: string, keyspace: string | undefined): boolean {
  const word = firstWord(query);
  if (word === 'desc' || word === 'describe') return true;
  return word === 'select' && ((keyspace !== undefined && isSystemKeyspace(keyspace)) || /system/i.test(query));
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

/** What `query` reads; `keyspace` is the connection's (USE) or the request's (v5 keyspace flag). */
export function statementTarget(query: string, keyspace: string | undefined): StatementTarget {
  try {
    const lexer = new CqlLexer(query);
    const word = lexer.next();
    if (isWord(word, 'select')) return selectTarget(lexer, keyspace);
    if (isWord(word, 'desc') || isWord(word, 'describe')) {
      if (!isWord(lexer.next(), 'cluster')) return { kind: 'other' };
      const rest = lexer.next();
      return rest.kind === 'end' || isSymbol(rest, ';') ? { kind: 'describe-cluster' } : { kind: 'other' };
    }
    return { kind: 'other' };
  } catch (error) {
    if (error instanceof CqlSyntaxError) return { kind: 'other' };
    throw error;
  }
}
