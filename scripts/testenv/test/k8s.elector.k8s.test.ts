// The client-go leader-election probe (scripts/testenv/k8s-elector) against the real
// kube-apiserver: it takes a Lease, the Lease reads back through @kubernetes/client-node as
// client-go wrote it, and a stopped leader releases it to the next candidate.
import { describe, it, expect, beforeAll, afterEach } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import * as k8s from '@kubernetes/client-node';
import { testServer } from '../state.mjs';

interface K8sEntry {
  kubeconfig: string;
}

interface ElectorEvent {
  event: string;
  identity?: string;
}

const entry = testServer<K8sEntry>('k8s');
const describeK8s = entry ? describe : describe.skip;
const namespace = 'default';

class Elector {
  readonly events: ElectorEvent[] = [];
  private readonly waiters: Array<() => void> = [];
  readonly child: ChildProcess;

  constructor(bin: string, args: string[]) {
    this.child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.events.push(JSON.parse(line) as ElectorEvent);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  async waitFor(pred: (e: ElectorEvent) => boolean, timeoutMs = 30_000): Promise<ElectorEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.events.find(pred);
      if (hit) return hit;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`elector: no matching event; saw ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  stop(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }
}

describeK8s('k8s-elector (client-go leaderelection) on the test server', () => {
  let bin = '';
  const running: Elector[] = [];

  beforeAll(async () => {
    // Built by the testenv module into the cache; the first build compiles client-go.
    const mod = (await import('../servers/k8s.mjs' as string)) as { buildElector(): Promise<string> };
    bin = await mod.buildElector();
  }, 900_000);

  afterEach(async () => {
    await Promise.all(running.splice(0).map((e) => e.stop()));
  });

  const start = (lease: string, identity: string): Elector => {
    const e = new Elector(bin, [
      `--kubeconfig=${entry!.kubeconfig}`,
      `--namespace=${namespace}`,
      `--name=${lease}`,
      `--identity=${identity}`,
      '--lease-duration=4s',
      '--renew-deadline=3s',
      '--retry-period=500ms',
    ]);
    running.push(e);
    return e;
  };

  it('leads, is seen by a second candidate, and hands over when stopped', async () => {
    const lease = `elector-smoke-${Date.now().toString(36)}`;
    const a = start(lease, 'a');
    await a.waitFor((e) => e.event === 'started-leading');

    const api = new k8s.KubeConfig();
    api.loadFromFile(entry!.kubeconfig);
    const coord = api.makeApiClient(k8s.CoordinationV1Api);
    const held = await coord.readNamespacedLease({ name: lease, namespace });
    expect(held.spec?.holderIdentity).toBe('a');
    expect(held.spec?.leaseDurationSeconds).toBe(4);
    expect(held.spec?.renewTime).toBeTruthy();

    const b = start(lease, 'b');
    await b.waitFor((e) => e.event === 'new-leader' && e.identity === 'a');
    expect(b.events.some((e) => e.event === 'started-leading')).toBe(false);

    await a.stop(); // releases the lease (release-on-cancel)
    expect(a.events.map((e) => e.event)).toContain('stopped-leading');
    await b.waitFor((e) => e.event === 'started-leading');
    const taken = await coord.readNamespacedLease({ name: lease, namespace });
    expect(taken.spec?.holderIdentity).toBe('b');
    expect(taken.spec?.leaseTransitions).toBeGreaterThanOrEqual(1);

    await b.stop();
    await coord.deleteNamespacedLease({ name: lease, namespace });
  }, 60_000);
});
