// Which membership setups probe their peers, and which are warned about.
import { describe, expect, it } from '@jest/globals';
import type { Muster } from '@muster/core';
import { peerProbeFor } from '../../src/proxy/peer-probe-setup.js';
import { proxyConfig } from './harness.js';

const config = (peerProbe?: Record<string, unknown>) =>
  proxyConfig({ backend: { contactPoints: ['127.0.0.1'] }, ...(peerProbe ? { peerProbe } : {}) }, 'proxy-a');
const muster = (adapters: Record<string, string>) => ({ adapters }) as unknown as Muster;

describe('peerProbeFor', () => {
  it('probes static members without a heartbeat section, and does not warn', () => {
    const probing = peerProbeFor(config(), muster({ discovery: 'static' }), undefined);
    expect(probing).toMatchObject({ probe: { interval: 1000, timeout: 1000 }, heartbeatsProcessLocal: false, warning: undefined });
  });

  it('probes, and warns, when the heartbeat store is the in-process static one', () => {
    const probing = peerProbeFor(config(), muster({ discovery: 'static', heartbeat: 'static' }), undefined);
    expect(probing.probe).toBeDefined();
    expect(probing.heartbeatsProcessLocal).toBe(true);
    expect(probing.warning).toMatch(/inside this process.*probed instead/);
  });

  it('leaves liveness to a shared HeartbeatStore, unless told to probe', () => {
    expect(peerProbeFor(config(), muster({ discovery: 'consul', heartbeat: 'consul' }), undefined).probe).toBeUndefined();
    expect(peerProbeFor(config({ mode: 'on' }), muster({ discovery: 'consul', heartbeat: 'consul' }), undefined).probe).toBeDefined();
  });

  it('with the probe off, the static store is still warned about', () => {
    const probing = peerProbeFor(config({ mode: 'off' }), muster({ discovery: 'static', heartbeat: 'static' }), undefined);
    expect(probing.probe).toBeUndefined();
    expect(probing.warning).toMatch(/peerProbe is off/);
  });
});
