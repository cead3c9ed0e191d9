// The client-go leader-election probe (scripts/testenv/k8s-elector) for this package's tests: where
// its binary is, and a running elector whose JSON-line events a test can wait on.
import { spawn, type ChildProcess } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ELECTOR_VERSION } from '../../../scripts/testenv/servers/k8s.mjs';

const cache = process.env.MUSTER_TESTENV_CACHE || join(homedir(), '.cache', 'muster-testenv');
export const electorBinary = join(cache, `k8s-elector-${ELECTOR_VERSION as string}`, 'k8s-elector');

export interface ElectorEvent {
  event: string;
  identity?: string;
}

export interface ElectorTiming {
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
}

/** client-go's proportions (15 s / 10 s / 2 s) at a 4 s lease. */
export const fastElection: ElectorTiming = { leaseDuration: '4s', renewDeadline: '3s', retryPeriod: '300ms' };

export function startElector(
  binary: string,
  where: { kubeconfig: string; namespace: string; name: string; identity: string },
  timing: ElectorTiming = fastElection,
) {
  const child: ChildProcess = spawn(
    binary,
    [
      '--kubeconfig',
      where.kubeconfig,
      '--namespace',
      where.namespace,
      '--name',
      where.name,
      '--identity',
      where.identity,
      '--lease-duration',
      timing.leaseDuration,
      '--renew-deadline',
      timing.renewDeadline,
      '--retry-period',
      timing.retryPeriod,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const events: ElectorEvent[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => events.push(JSON.parse(line) as ElectorEvent));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, events, exited };
}
