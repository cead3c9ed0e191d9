// One cold start for bench/cold-start's runner: import Muster, create it with the kubernetes
// discovery adapter, list once, close. Run through the cold-start runner:
//   K8S_KUBECONFIG=<testenv kubeconfig> BENCH_EXTRA="kubernetes ../k8s-watch/first-list.mjs,client-node-import -e import('@kubernetes/client-node')" node bench/cold-start/run.mjs
const { createMuster } = await import('@muster/core');
const muster = await createMuster({ discovery: { adapter: 'kubernetes', options: { kubeconfig: process.env.K8S_KUBECONFIG } } });
await muster.discovery.list('cold-start');
await muster.close();
