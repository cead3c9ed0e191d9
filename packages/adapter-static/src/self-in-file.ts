import { InvalidArgumentError } from '@muster/core';
import type { SelfConfig } from './members.js';

/**
 * This process's identity when the members come from a file. The file is read when discovery
 * starts and may change while it runs, so `self` can only name a member by id here; that id is the
 * instance's identity (a proxy's instanceId) whether or not the file lists it yet. Without this,
 * `self: proxy-0` beside `file:` was dropped and every process on a host took the host name.
 */
export function selfInFile(self: SelfConfig | undefined, where: string): { selfId: string } | undefined {
  if (self === undefined) return undefined;
  if (typeof self === 'string') return { selfId: self };
  if ('id' in self) return { selfId: self.id };
  throw new InvalidArgumentError(
    `${where}: with file:, name this process by its member id (self: <id>); ${JSON.stringify(self)} would depend on the file's contents, which change while it runs`,
  );
}
