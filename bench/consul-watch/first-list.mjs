// One cold start for bench/cold-start's runner: import Muster, create it with the consul discovery
// adapter, list once against the testenv agent, close. Run through the cold-start runner:
//   CONSUL_HTTP_ADDR=<testenv consul address> BENCH_EXTRA="consul ../consul-watch/first-list.mjs,consul-package-import -e import('consul')" node bench/cold-start/run.mjs
const { createMuster } = await import('@muster/core');
const muster = await createMuster({ discovery: { adapter: 'consul', options: {} } });
await muster.discovery.list('cold-start');
await muster.close();
