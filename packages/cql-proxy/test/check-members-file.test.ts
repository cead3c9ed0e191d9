// Static membership from a members file, one process per member (issue 13, newcomer points 2 and
// 6): `self: <id>` beside `file:` is this instance's identity. It was dropped, so every proxy on a
// host took the host name as its instanceId, found itself "not in the members list" and never became
// ready, silently. A self that depends on the file's contents is refused at its place.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'muster-check-file-'));
writeFileSync(
  join(dir, 'members.yaml'),
  `members:
  - { id: proxy-0, address: 127.0.0.1, port: 9042 }
  - { id: proxy-1, address: 127.0.0.2, port: 9042 }
`,
);
const check = (name: string, self: string) => {
  const path = join(dir, name);
  writeFileSync(
    path,
    `discovery:
  adapter: static
  options:
    file: ./members.yaml
    self: ${self}
proxy:
  backend: { contactPoints: [127.0.0.1:9142] }
`,
  );
  const r = spawnSync(process.execPath, [bin, '--check', '--config', path], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { path, code: r.status, out: r.stdout, err: r.stderr };
};

describe('--check with a members file', () => {
  it('self: <id> is the instanceId the run uses, not the host name', () => {
    const r = check('by-id.yaml', 'proxy-1');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as { proxy: { instanceId: string } }).proxy.instanceId).toBe('proxy-1');
    expect(JSON.parse(check('by-id-object.yaml', '{ id: proxy-0 }').out).proxy.instanceId).toBe('proxy-0');
  });

  it('a self by address or index is refused at its place, since the file can change', () => {
    const r = check('by-address.yaml', '{ address: 127.0.0.2 }');
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${r.path}:5:11: discovery.options.self: with file:, name this process by its member id`);
  });
});

describe('--check reads the members file as the start does', () => {
  const withFile = (name: string, members: string) => {
    writeFileSync(join(dir, `${name}.members.yaml`), members);
    const path = join(dir, `${name}.yaml`);
    writeFileSync(
      path,
      `discovery: { adapter: static, options: { file: ./${name}.members.yaml, self: proxy-0 } }\nproxy:\n  backend: { contactPoints: [127.0.0.1:9142] }\n`,
    );
    const r = spawnSync(process.execPath, [bin, '--check', '--config', path], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    return { members: join(dir, `${name}.members.yaml`), code: r.status, err: r.stderr };
  };

  it('a list without members: is refused at its place, saying what the file must hold', () => {
    const r = withFile('list', '- { id: proxy-0, address: 127.0.0.1, port: 9042 }\n');
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${r.members}:1:1: the document must be a map with a members: list, e.g. members: [{ id: proxy-0`);
  });

  it('a member without a port is refused at its place', () => {
    const r = withFile('no-port', 'members:\n  - { id: proxy-0, address: 127.0.0.1 }\n');
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${r.members}:2:5: members[0].port:`);
  });

  it('two members with one id are refused at the later one', () => {
    const r = withFile(
      'dup',
      'members:\n  - { id: proxy-0, address: 127.0.0.1, port: 9042 }\n  - { id: proxy-0, address: 127.0.0.2, port: 9042 }\n',
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${r.members}:3:11: members[1].id: member 0 has the id 'proxy-0' too; ids must be unique`);
  });

  it('a missing file is refused, naming it', () => {
    const path = join(dir, 'missing.yaml');
    writeFileSync(
      path,
      `discovery: { adapter: static, options: { file: ./nowhere.yaml, self: proxy-0 } }\nproxy:\n  backend: { contactPoints: [127.0.0.1:9142] }\n`,
    );
    const r = spawnSync(process.execPath, [bin, '--check', '--config', path], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${join(dir, 'nowhere.yaml')}: cannot read config: no such file`);
  });
});
