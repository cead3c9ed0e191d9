// Preloaded into the Muster proxy by run.mjs --loop-delay (node --require): how long the proxy's
// event loop was late, and its GC pauses, in one measured window. A forwarded request that arrives
// while the loop is busy (a GC pause, another client's burst) waits that long before it is read:
// this is the proxy's own share of the added latency. run.mjs talks to it over the IPC channel:
// 'reset' when the window opens, 'report' (answered with the figures) when it closes.
const { monitorEventLoopDelay, PerformanceObserver } = require('node:perf_hooks');

// 1 ms is the finest resolution: the timer it samples with fires 1,000 times a second.
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let gc = { count: 0, ms: 0, maxMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.count++;
    gc.ms += entry.duration;
    gc.maxMs = Math.max(gc.maxMs, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

// The histogram holds whole timer intervals (resolution + lateness): the lateness is what is reported.
const late = (ns) => Math.max(0, ns / 1e6 - 1);
process.on('message', (message) => {
  if (message === 'reset') {
    delay.reset();
    gc = { count: 0, ms: 0, maxMs: 0 };
  } else if (message === 'report') {
    process.send({
      loopDelay: {
        p50: late(delay.percentile(50)),
        p99: late(delay.percentile(99)),
        p999: late(delay.percentile(99.9)),
        max: late(delay.max),
      },
      gc,
    });
  }
});
// The channel must not keep the proxy alive after SIGTERM.
process.channel?.unref();
