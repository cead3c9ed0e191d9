// What a user sees when the cluster is not what the config says: a namespace that does not exist,
// an API server that is not there, credentials the server rejects.
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMuster } from '@muster/core';
import { entry } from './k8s-testenv.js';

const describeK8s = entry ? describe : describe.skip;

function kubeconfigWith(server: string, token: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'muster-k8s-errors-')), 'kubeconfig');
  writeFileSync(
    file,
    `current-context: x
clusters: [{ name: c, cluster: { server: "${server}", certificate-authority-data: ${readFileSync(entry!.caFile).toString('base64')} } }]
users: [{ name: u, user: { token: "${token}" } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
`,
  );
  return file;
}

describeK8s('errors against the real API server', () => {
  test('a namespace that does not exist is named, with the fix', async () => {
    const muster = await createMuster({
      lock: { adapter: 'kubernetes', options: { kubeconfig: entry!.kubeconfig, namespace: 'no-such-namespace' } },
    });
    try {
      await expect(muster.lock.acquire('x', { ttl: 3000 })).rejects.toThrow(
        /create leases\.coordination\.k8s\.io 'x' in namespace 'no-such-namespace': namespace 'no-such-namespace' does not exist; create it or set the adapter's namespace option/,
      );
    } finally {
      await muster.close();
    }
  });

  test('an API server that is not there: the address and the socket error', async () => {
    const muster = await createMuster({
      discovery: { adapter: 'kubernetes', options: { kubeconfig: kubeconfigWith('https://127.0.0.1:1', 'x') } },
    });
    try {
      await expect(muster.discovery.list('svc')).rejects.toThrow(
        /list endpointslices\.discovery\.k8s\.io in namespace 'default': cannot reach the API server at https:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\)/,
      );
    } finally {
      await muster.close();
    }
  });

  test('a token the server rejects: 401 with what to check', async () => {
    const muster = await createMuster({
      heartbeat: { adapter: 'kubernetes', options: { kubeconfig: kubeconfigWith(entry!.server, 'wrong-token') } },
    });
    try {
      await expect(muster.heartbeat.list()).rejects.toThrow(
        /list leases\.coordination\.k8s\.io in namespace 'default': the API server rejected the credentials \(401 Unauthorized\)/,
      );
    } finally {
      await muster.close();
    }
  });
});

describeK8s('kubeconfig users with an exec plugin', () => {
  test('are served through @kubernetes/client-node, loaded for them only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'muster-k8s-exec-'));
    const plugin = join(dir, 'credential.mjs');
    writeFileSync(
      plugin,
      `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: ${JSON.stringify(entry?.adminToken ?? '')} } }));\n`,
    );
    const file = join(dir, 'kubeconfig');
    writeFileSync(
      file,
      `current-context: x
clusters: [{ name: c, cluster: { server: "${entry!.server}", certificate-authority-data: ${readFileSync(entry!.caFile).toString('base64')} } }]
users: [{ name: u, user: { exec: { apiVersion: client.authentication.k8s.io/v1, command: "${process.execPath}", args: ["${plugin}"], interactiveMode: Never } } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
`,
    );
    const muster = await createMuster({ discovery: { adapter: 'kubernetes', options: { kubeconfig: file } } });
    try {
      expect(await muster.discovery.list('nothing-here')).toEqual([]);
    } finally {
      await muster.close();
    }
  }, 30_000);
});
