// The static adapter through createMuster: what a caller of its ports sees (review 5's findings).
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMuster, type Muster } from '@muster/core';
import staticAdapter from '../src/index.js';

const opened: Muster[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((m) => m.close()));
});
const open = async (config: Parameters<typeof createMuster>[0]) => {
  const muster = await createMuster(config, { adapters: { static: staticAdapter } });
  opened.push(muster);
  return muster;
};

describe('static discovery with a members file', () => {
  it('self names this process by id: discovery.self is its member, as the file lists it now', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'muster-static-'));
    const members = join(dir, 'members.yaml');
    writeFileSync(
      members,
      'members:\n  - { id: proxy-0, address: 10.0.0.1, port: 9042 }\n  - { id: proxy-1, address: 10.0.0.2, port: 9042 }\n',
    );
    const muster = await open({ discovery: { adapter: 'static', options: { file: members, self: 'proxy-1' } } });
    expect(muster.discovery.self).toMatchObject({ id: 'proxy-1', address: '10.0.0.2', port: 9042 });
    writeFileSync(members, 'members:\n  - { id: proxy-1, address: 10.0.0.9, port: 9043 }\n');
    await muster.discovery.list('any');
    expect(muster.discovery.self).toMatchObject({ id: 'proxy-1', address: '10.0.0.9', port: 9043 });
  });
});

describe('static heartbeats', () => {
  it('keep a copy of the payload: a caller mutating its object changes neither the record nor what watchers saw', async () => {
    const muster = await open({ heartbeat: { adapter: 'static', options: { scope: `copy-${process.pid}` } } });
    const watch = muster.heartbeat.watch()[Symbol.asyncIterator]();
    expect((await watch.next()).value).toMatchObject({ type: 'snapshot' });
    const payload = { n: 0 };
    await muster.heartbeat.beat('m', payload);
    expect((await watch.next()).value).toMatchObject({ type: 'joined', member: { payload: { n: 0 } } });
    payload.n = 1;
    await muster.heartbeat.beat('m', payload);
    expect((await watch.next()).value).toMatchObject({ type: 'updated', member: { payload: { n: 1 } } });
    const read = await muster.heartbeat.get('m');
    payload.n = 99;
    (read!.payload as { n: number }).n = 42;
    expect((await muster.heartbeat.get('m'))?.payload).toEqual({ n: 1 });
    await watch.return?.();
  });
});
