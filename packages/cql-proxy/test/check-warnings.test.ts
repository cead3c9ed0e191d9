// --check warns, as the run does, about `heartbeat: { adapter: static }` beside peers (issue 13,
// newcomer point 2): that store lives in one process, so three proxy processes would each see only
// their own heartbeat. The config stays valid (peers are probed instead), so the exit code is 0.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'muster-check-warn-'));
const check = (name: string, members: string[], extra: string) => {
  const path = join(dir, name);
  writeFileSync(
    path,
    `discovery:
  adapter: static
  options:
    members: [${members.map((id, i) => `{ id: ${id}, address: 127.0.0.${i + 1}, port: 9042 }`).join(', ')}]
    self: ${members[0]}
${extra}proxy:
  backend: { contactPoints: [127.0.0.1:9142] }
`,
  );
  const r = spawnSync(process.execPath, [bin, '--check', '--config', path], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { code: r.status, err: r.stderr };
};
const warning = "muster-cql-proxy: warning: heartbeat adapter 'static' keeps heartbeats inside this process";

describe('--check and the in-process static heartbeat store', () => {
  it('warns when the members include peers, naming the fix', () => {
    const r = check('peers.yaml', ['proxy-0', 'proxy-1', 'proxy-2'], 'heartbeat: { adapter: static }\n');
    expect(r.code).toBe(0);
    expect(r.err).toContain(warning);
    expect(r.err).toContain('Peers are probed instead (proxy.peerProbe). Remove the heartbeat: section');
  });

  it('says peers count as alive when probing is off', () => {
    const r = check('off.yaml', ['proxy-0', 'proxy-1'], 'heartbeat: { adapter: static }\n');
    const off = check('off2.yaml', ['proxy-0', 'proxy-1'], 'heartbeat: { adapter: static }\n').err;
    expect(off).toBe(r.err);
    const probeOff = join(dir, 'probe-off.yaml');
    writeFileSync(
      probeOff,
      `discovery: { adapter: static, options: { members: [{ id: a, address: 127.0.0.1, port: 9042 }, { id: b, address: 127.0.0.2, port: 9042 }], self: a } }
heartbeat: { adapter: static }
proxy:
  backend: { contactPoints: [127.0.0.1:9142] }
  peerProbe: { mode: off }
`,
    );
    const p = spawnSync(process.execPath, [bin, '--check', '--config', probeOff], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(p.status).toBe(0);
    expect(p.stderr).toContain('proxy.peerProbe is off, so peers in other processes count as alive');
  });

  it('is quiet for a single member, and without the heartbeat section', () => {
    expect(check('alone.yaml', ['proxy-0'], 'heartbeat: { adapter: static }\n').err).toBe('');
    expect(check('no-heartbeat.yaml', ['proxy-0', 'proxy-1'], '').err).toBe('');
  });
});
