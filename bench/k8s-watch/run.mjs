// Kubernetes discovery at scale, against the testenv kube-apiserver (`npm run testenv -- up k8s`):
// a Service with ENDPOINTS endpoints in SLICES EndpointSlices. Prints, never asserts:
//   - time from watch() to the first snapshot, and heap/RSS growth once synced
//   - in-process cost of one slice update (merge all slices + diff), on the real objects
//   - latency from an EndpointSlice write to the change reaching the watch() consumer (p50/p99)
// Build first (npx tsc -b): this imports the packages' dist output, as an application would.
import * as k8s from '@kubernetes/client-node';
import { performance } from 'node:perf_hooks';
import { readState } from '../../scripts/testenv/state.mjs';

const SLICES = Number(process.env.SLICES ?? 100);
const PER_SLICE = Number(process.env.PER_SLICE ?? 100);
const UPDATES = Number(process.env.UPDATES ?? 200);
const entry = readState().k8s;
if (!entry) {
  console.error('k8s-watch bench: the k8s test server is not running; start it with: npm run testenv -- up k8s');
  process.exit(1);
}
const gc = globalThis.gc ?? (() => {});
const mib = (b) => (b / 1048576).toFixed(1);
const kc = new k8s.KubeConfig();
kc.loadFromFile(entry.kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const discoveryApi = kc.makeApiClient(k8s.DiscoveryV1Api);
const namespace = `muster-bench-${Date.now().toString(36)}`;
const service = 'bench';
await core.createNamespace({ body: { metadata: { name: namespace } } });

const pod = (s, i) => `pod-${s}-${i}`;
const slice = (s) => ({
  metadata: { name: `${service}-${s}`, labels: { 'kubernetes.io/service-name': service } },
  addressType: 'IPv4',
  endpoints: Array.from({ length: PER_SLICE }, (_, i) => ({
    addresses: [`10.${s >> 8}.${s & 255}.${i + 1}`],
    conditions: { ready: true, serving: true, terminating: false },
    nodeName: `node-${i % 10}`,
    zone: `zone-${i % 3}`,
    targetRef: { kind: 'Pod', name: pod(s, i), namespace },
  })),
  ports: [{ name: 'cql', port: 9042, protocol: 'TCP' }],
});
const createStart = performance.now();
for (let s = 0; s < SLICES; s += 10) {
  await Promise.all(
    Array.from({ length: Math.min(10, SLICES - s) }, (_, k) =>
      discoveryApi.createNamespacedEndpointSlice({ namespace, body: slice(s + k) }),
    ),
  );
}
console.log(`created ${SLICES} slices × ${PER_SLICE} endpoints in ${((performance.now() - createStart) / 1000).toFixed(1)} s`);

try {
  const { createMuster } = await import('@muster/core');
  // The adapter's internals (not its package API), from its build.
  const { sliceCandidates } = await import('../../packages/adapter-k8s/dist/endpoint-slices.js');
  const { ServiceEndpoints } = await import('../../packages/adapter-k8s/dist/service-endpoints.js');
  gc();
  const before = process.memoryUsage();
  const muster = await createMuster({ discovery: { adapter: 'kubernetes', options: { kubeconfig: entry.kubeconfig, namespace } } });
  const watchStart = performance.now();
  const iterator = muster.discovery.watch(service)[Symbol.asyncIterator]();
  const first = await iterator.next();
  const syncMs = performance.now() - watchStart;
  gc();
  const after = process.memoryUsage();
  console.log(`watch → snapshot of ${first.value.endpoints.length} endpoints: ${syncMs.toFixed(0)} ms`);
  console.log(
    `memory after sync: heap +${mib(after.heapUsed - before.heapUsed)} MiB, rss +${mib(after.rss - before.rss)} MiB (heap ${mib(after.heapUsed)} MiB, rss ${mib(after.rss)} MiB)${globalThis.gc ? '' : ' [run with --expose-gc for steadier figures]'}`,
  );

  // In-process cost of one slice update, as the watch loop does it: convert the changed slice,
  // merge it with the others' endpoints, diff against the last view.
  const { items } = await discoveryApi.listNamespacedEndpointSlice({ namespace, labelSelector: `kubernetes.io/service-name=${service}` });
  const plain = JSON.parse(JSON.stringify(items));
  const state = new ServiceEndpoints();
  state.update(
    plain.map((s) => [s.metadata.name, sliceCandidates(s)]),
    { silent: true },
  );
  const rounds = 100;
  const costStart = performance.now();
  for (let r = 0; r < rounds; r++) {
    const s = plain[r % plain.length];
    s.endpoints[r % PER_SLICE].conditions.ready = !s.endpoints[r % PER_SLICE].conditions.ready;
    state.update([[s.metadata.name, sliceCandidates(s)]]);
  }
  console.log(
    `one slice update in process (convert the slice, merge, diff, snapshot of ${SLICES * PER_SLICE}): ${((performance.now() - costStart) / rounds).toFixed(1)} ms`,
  );

  // Change → consumer latency: flip one endpoint's readiness, time until its 'updated' event.
  const waiting = new Map();
  (async () => {
    for (;;) {
      const { value, done } = await iterator.next();
      if (done) return;
      if (value.type === 'updated') waiting.get(value.endpoint.id)?.(performance.now());
    }
  })().catch((error) => console.error('consumer failed:', error));
  const latencies = [];
  for (let u = 0; u < UPDATES; u++) {
    const s = u % SLICES;
    const i = Math.floor(u / SLICES) % PER_SLICE;
    const current = await discoveryApi.readNamespacedEndpointSlice({ name: `${service}-${s}`, namespace });
    current.endpoints[i].conditions.ready = !current.endpoints[i].conditions.ready;
    const seen = new Promise((resolve) => waiting.set(pod(s, i), resolve));
    const t0 = performance.now();
    await discoveryApi.replaceNamespacedEndpointSlice({ name: `${service}-${s}`, namespace, body: current });
    latencies.push((await seen) - t0);
    waiting.delete(pod(s, i));
  }
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(1);
  console.log(
    `change → watch() consumer over ${UPDATES} sequential slice writes: p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${latencies.at(-1).toFixed(1)} ms`,
  );
  await muster.close();
} finally {
  await discoveryApi.deleteCollectionNamespacedEndpointSlice({ namespace }).catch(() => undefined);
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
}
console.log(
  `node ${process.version}; kube-apiserver ${entry.version}; ${SLICES} slices × ${PER_SLICE}; compare: the same figures from a previous run on this machine`,
);
