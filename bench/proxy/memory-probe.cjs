// Preloaded into the proxy by memory.mjs (node --require): every 250 ms it writes the process's
// memory figures and the time spent in GC so far to $MUSTER_BENCH_PROBE_FILE. Measurement only.
const { writeFileSync } = require('node:fs');
const { PerformanceObserver } = require('node:perf_hooks');
const v8 = require('node:v8');
const Module = require('node:module');

const file = process.env.MUSTER_BENCH_PROBE_FILE;
const gc = { ms: 0, count: 0, scavengeMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.ms += entry.duration;
    gc.count++;
    if (entry.detail?.kind === 1) gc.scavengeMs += entry.duration; // NODE_PERFORMANCE_GC_MINOR
  }
}).observe({ entryTypes: ['gc'] });
const MiB = (n) => n / 1048576;
setInterval(() => {
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, MiB(s.space_size)]));
  const cpu = process.cpuUsage();
  writeFileSync(
    file,
    JSON.stringify({
      heapTotal: MiB(m.heapTotal),
      heapUsed: MiB(m.heapUsed),
      external: MiB(m.external),
      arrayBuffers: MiB(m.arrayBuffers),
      newSpace: spaces.new_space,
      oldSpace: spaces.old_space,
      codeSpace: spaces.code_space,
      cjsModules: Object.keys(Module._cache).length,
      gc,
      cpuMs: (cpu.user + cpu.system) / 1000,
    }),
  );
}, 250).unref();
