import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '@muster/core';

/**
 * Murmur3Partitioner tokens for the virtual ring, as the decimal strings `system.local.tokens` and
 * `system.peers.tokens` carry. The proxy forwards every request whatever token a driver routes it
 * by, so tokens only have to look like a healthy ring: distinct, in range, identical on every
 * instance, and stable enough that drivers do not rebuild their token maps on every change.
 */

const MIN_TOKEN = -(2n ** 63n);
const MAX_TOKEN = 2n ** 63n - 1n;
const RING_SIZE = 2n ** 64n;

export const DEFAULT_TOKENS_PER_MEMBER = 8;
export const MAX_TOKENS_PER_MEMBER = 256;

/**
 * `stable` (default): each instance's tokens come from a hash of its own id, so a join or leave
 * leaves every other instance's tokens as they were.
 * `zdm`: the evenly interleaved ring the ZDM proxy computes, `floor(2^64/(T·N))·(t·N+i) − 2^63`,
 * for deployments that mix Muster and ZDM proxies or compare with them; every join or leave moves
 * every token.
 */
export type TokenMode = 'stable' | 'zdm';

export interface TokenOptions {
  readonly mode?: TokenMode;
  /** Tokens per instance (T), 1..256; default 8. */
  readonly perMember?: number;
}

export function tokensPerMember(options: TokenOptions = {}): number {
  const t = options.perMember ?? DEFAULT_TOKENS_PER_MEMBER;
  if (!Number.isInteger(t) || t < 1 || t > MAX_TOKENS_PER_MEMBER) {
    throw new InvalidArgumentError(`tokens per member must be an integer from 1 to ${MAX_TOKENS_PER_MEMBER}, got ${t}`);
  }
  return t;
}

/** A signed 64-bit hash of `text`: the first 8 bytes of its SHA-256, big-endian. */
export function hash64(text: string): bigint {
  return createHash('sha256').update(text, 'utf8').digest().readBigInt64BE(0);
}

/**
 * The `t`-th stable token candidate of an instance. The partitioner's minimum token is not a
 * valid node token (it marks the ring's start), so that one value is hashed again.
 */
function stableCandidate(instanceId: string, t: number, attempt: number, hash: (text: string) => bigint = hash64): bigint {
  const value = hash(attempt === 0 ? `${instanceId}#${t}` : `${instanceId}#${t}#${attempt}`);
  return value === MIN_TOKEN ? stableCandidate(instanceId, t, attempt + 1, hash) : value;
}

/** The T stable tokens of one instance, ignoring collisions with other instances. */
export function stableTokens(instanceId: string, count = DEFAULT_TOKENS_PER_MEMBER): bigint[] {
  tokensPerMember({ perMember: count });
  return Array.from({ length: count }, (_, t) => stableCandidate(instanceId, t, 0));
}

/** The ZDM proxy's tokens for member `index` of `memberCount`. */
export function zdmTokens(index: number, memberCount: number, count = DEFAULT_TOKENS_PER_MEMBER): bigint[] {
  tokensPerMember({ perMember: count });
  if (!Number.isInteger(memberCount) || memberCount < 1)
    throw new InvalidArgumentError(`member count must be a positive integer, got ${memberCount}`);
  if (!Number.isInteger(index) || index < 0 || index >= memberCount) {
    throw new InvalidArgumentError(`member index must be in 0..${memberCount - 1}, got ${index}`);
  }
  const n = BigInt(memberCount);
  const step = RING_SIZE / (BigInt(count) * n); // BigInt division floors for positive operands
  return Array.from({ length: count }, (_, t) => step * (BigInt(t) * n + BigInt(index)) + MIN_TOKEN);
}

export function isValidToken(token: bigint): boolean {
  return token >= MIN_TOKEN && token <= MAX_TOKEN;
}

/**
 * `set<varchar>` cells come back sorted by the element's comparator (UTF-8 bytes), so a real
 * server lists `-1…` before `1…` before `9…` whatever their numeric order; we do the same.
 */
function asTokenSet(tokens: readonly bigint[]): string[] {
  return tokens.map(String).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The tokens of every instance of the ring, keyed by instance id. `ringOrder` must be the shared
 * ordered member list (see `membership.ts`): in `zdm` mode the position is the member index, and
 * in `stable` mode a (2^-64-unlikely) collision is settled in favour of the instance that comes
 * first, the other one hashing again, so every instance settles it the same way. `hash` is
 * replaceable so tests can force collisions.
 */
export function assignTokens(
  ringOrder: readonly string[],
  options: TokenOptions = {},
  hash: (text: string) => bigint = hash64,
): Map<string, string[]> {
  const count = tokensPerMember(options);
  const out = new Map<string, string[]>();
  if ((options.mode ?? 'stable') === 'zdm') {
    ringOrder.forEach((id, i) => out.set(id, asTokenSet(zdmTokens(i, ringOrder.length, count))));
    return out;
  }
  const taken = new Set<bigint>();
  for (const id of ringOrder) {
    const mine: bigint[] = [];
    for (let t = 0; t < count; t++) {
      let attempt = 0;
      let token = stableCandidate(id, t, attempt, hash);
      while (taken.has(token)) token = stableCandidate(id, t, ++attempt, hash);
      taken.add(token);
      mine.push(token);
    }
    out.set(id, asTokenSet(mine));
  }
  return out;
}
