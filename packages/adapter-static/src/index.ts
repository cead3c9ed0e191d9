import { InvalidArgumentError } from '@muster/core';
import { createDiscovery, createHeartbeatStore, createLock, defineAdapter, s, type AdapterContext, type Infer } from '@muster/core/adapter';
import { StaticDiscoveryBackend } from './discovery.js';
import { StaticHeartbeatBackend } from './heartbeat.js';
import { StaticLockBackend } from './lock.js';
import { findSelf, membersSchema, readMembersFile, selfSchema, toEndpoints } from './members.js';
import { selfInFile } from './self-in-file.js';

/** A duplicate member id, named at the id of the later member. */
const duplicateAt = (context: AdapterContext) => (index: number, problem: string) =>
  new InvalidArgumentError(`${context.describe(['members', index, 'id'])}: ${problem}`);

const optionsSchema = s.object({
  service: s.optional(s.string({ minLength: 1 })),
  members: s.optional(membersSchema),
  file: s.optional(s.string({ minLength: 1 })),
  self: s.optional(selfSchema),
  /** Lock and heartbeat tables are shared by every client of one scope in this process. */
  scope: s.withDefault(s.string({ minLength: 1 }), 'default'),
  holder: s.optional(s.string({ minLength: 1 })),
  ttl: s.optional(s.duration({ min: 1 })),
  maxPayloadBytes: s.withDefault(s.integer({ min: 1 }), 4096),
});

export type StaticOptions = Infer<typeof optionsSchema>;

/**
 * The embedded default: membership from the config (or a file beside it), lock and heartbeats
 * in-process. Exact within one process, shared by nothing else: use it for one process, for tests
 * and for demos, not for coordinating several machines.
 */
export default defineAdapter({
  name: 'static',
  core: '^0.1.0',
  options: optionsSchema,
  // What the discovery factory would refuse, found without creating it (for --check).
  async check(port, options, context) {
    if (port !== 'discovery') return;
    if (options.members && options.file) {
      throw new InvalidArgumentError(`${context.describe([])}: give either members or file, not both`);
    }
    if (options.file) {
      // The start reads the file and fails on a broken one: so does the check, positioned in it.
      await readMembersFile(options.file, context.configDir);
      return selfInFile(options.self, context.describe(['self']));
    }
    const members = options.members ?? [];
    toEndpoints(members, duplicateAt(context));
    const self = findSelf(members, options.self, context.describe(['self']));
    return self ? { selfId: self.id } : undefined;
  },
  async discovery(options, context) {
    if (options.members && options.file) {
      throw new InvalidArgumentError(`${context.describe([])}: give either members or file, not both`);
    }
    const members = options.members ?? [];
    const self = options.file ? undefined : findSelf(members, options.self, context.describe(['self']));
    const selfId = options.file ? selfInFile(options.self, context.describe(['self']))?.selfId : undefined;
    const backend = new StaticDiscoveryBackend({
      ...(options.service !== undefined ? { service: options.service } : {}),
      members: toEndpoints(members, duplicateAt(context)),
      ...(options.file !== undefined ? { file: options.file } : {}),
      baseDir: context.configDir,
      ...(self ? { self } : {}),
      ...(selfId !== undefined ? { selfId } : {}),
    });
    await backend.start();
    return createDiscovery(backend);
  },
  lock(options, context) {
    return createLock(new StaticLockBackend({ scope: options.scope, holder: options.holder, clock: context.clock }), {
      clock: context.clock,
      timing: { minTtl: 1, ...(options.ttl !== undefined ? { defaultTtl: options.ttl } : {}) },
    });
  },
  heartbeat(options, context) {
    return createHeartbeatStore(new StaticHeartbeatBackend({ scope: options.scope }), {
      clock: context.clock,
      maxPayloadBytes: options.maxPayloadBytes,
      ...(options.ttl !== undefined ? { defaultTtl: options.ttl } : {}),
    });
  },
});
