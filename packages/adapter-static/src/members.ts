import { resolve } from 'node:path';
import { InvalidArgumentError, loadConfig, type Endpoint } from '@muster/core';
import { byId, s, type Infer } from '@muster/core/adapter';

export const memberSchema = s.object({
  id: s.optional(s.string({ minLength: 1 })),
  address: s.string({ minLength: 1 }),
  port: s.integer({ min: 1, max: 65535 }),
  ports: s.optional(s.record(s.integer({ min: 1, max: 65535 }))),
  ready: s.optional(s.boolean()),
  dc: s.optional(s.string()),
  rack: s.optional(s.string()),
  zone: s.optional(s.string()),
  metadata: s.optional(s.record(s.string())),
});

export type MemberConfig = Infer<typeof memberSchema>;

export const membersSchema = s.array(memberSchema);

/** Which member this process is: its id, its address (and port), or its index in the list as written. */
export const selfSchema = s.union(
  s.string({ minLength: 1 }),
  s.object({ id: s.string({ minLength: 1 }) }),
  s.object({ address: s.string({ minLength: 1 }), port: s.optional(s.integer({ min: 1, max: 65535 })) }),
  s.object({ index: s.integer({ min: 0 }) }),
);

export type SelfConfig = Infer<typeof selfSchema>;

export function toEndpoint(m: MemberConfig): Endpoint {
  return {
    id: m.id ?? `${m.address}:${m.port}`,
    address: m.address,
    port: m.port,
    ...(m.ports ? { ports: m.ports } : {}),
    ready: m.ready ?? true,
    ...(m.dc !== undefined ? { dc: m.dc } : {}),
    ...(m.rack !== undefined ? { rack: m.rack } : {}),
    ...(m.zone !== undefined ? { zone: m.zone } : {}),
    metadata: m.metadata ?? {},
  };
}

/**
 * Endpoints sorted by id, so every instance derives the same order whatever order the list was
 * written in. Duplicate ids are refused: two members with one identity would split the ring.
 */
export function toEndpoints(members: readonly MemberConfig[], fail: (index: number, problem: string) => Error): Endpoint[] {
  const endpoints = members.map(toEndpoint);
  const first = new Map<string, number>();
  endpoints.forEach((e, i) => {
    const earlier = first.get(e.id);
    if (earlier !== undefined) throw fail(i, `member ${earlier} has the id '${e.id}' too; ids must be unique`);
    first.set(e.id, i);
  });
  return endpoints.sort(byId);
}

export function findSelf(members: readonly MemberConfig[], self: SelfConfig | undefined, where: string): Endpoint | undefined {
  if (self === undefined) return undefined;
  const endpoints = members.map(toEndpoint);
  let found: Endpoint | undefined;
  if (typeof self === 'string') found = endpoints.find((e) => e.id === self);
  else if ('id' in self) found = endpoints.find((e) => e.id === self.id);
  else if ('index' in self) found = endpoints[self.index];
  else {
    const matches = endpoints.filter((e) => e.address === self.address && (self.port === undefined || e.port === self.port));
    if (matches.length > 1)
      throw new InvalidArgumentError(`${where}: address ${self.address} matches ${matches.length} members; add port to tell them apart`);
    found = matches[0];
  }
  if (!found)
    throw new InvalidArgumentError(`${where}: ${JSON.stringify(self)} matches no member (ids: ${endpoints.map((e) => e.id).join(', ')})`);
  return found;
}

/** Reads a members file: YAML (or JSON) with a `members:` list, positioned errors and all. */
export async function readMembersFile(file: string, baseDir: string): Promise<Endpoint[]> {
  const path = resolve(baseDir, file);
  // Read as a config file is (positioned errors, ${VAR} references); unreadable is a ConfigError naming the path.
  const source = await loadConfig(path, {
    document: 'a map with a members: list, e.g. members: [{ id: proxy-0, address: 10.0.0.1, port: 9042 }]',
  });
  return toEndpoints(source.parse(['members'], membersSchema), (i, problem) => source.error(['members', i, 'id'], problem));
}
