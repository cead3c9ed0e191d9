// One-process demo on the static adapter: 3 masters, 3 workers, 24 tasks; the leader and a
// worker crash half-way and the cluster finishes the work. `npm run demo -w @muster-examples/scheduler`
import { sleep } from '@muster/core/adapter';
import { InProcessCluster } from './cluster.js';
import { jsonLines } from './log.js';

const quiet = new Set(['task-started', 'task-done', 'assigned']);
const cluster = await InProcessCluster.start({
  masters: 3,
  workers: 3,
  settings: { leaseTtl: 3000, heartbeatTtl: 1000, beatInterval: 200, pollInterval: 100, assignInterval: 150, capacity: 2 },
  log: (who) => {
    const print = jsonLines(who);
    return (event, fields) => {
      if (!quiet.has(event)) print(event, fields);
    };
  },
});
try {
  await cluster.store.submit(
    Array.from({ length: 24 }, (_, i) => ({ id: `task-${String(i).padStart(2, '0')}`, durationMs: 300 + ((i * 53) % 400) })),
  );
  await sleep(1500);
  const leader = cluster.leader();
  const victim = cluster.workers.find((w) => w.running.length > 0);
  console.log(`\n--- crashing leader ${leader?.id} and worker ${victim?.id} (running ${victim?.running.join(', ')}) ---\n`);
  await Promise.all([leader?.crash(), victim?.crash()]);
  const started = Date.now();
  while (!(await cluster.store.tasks()).every((t) => t.status === 'done')) await sleep(100);
  const state = await cluster.store.state();
  const refused = state.fencedWrites.filter((w) => w.rejectedBecause !== undefined).length;
  console.log(
    `\nall ${state.tasks.length} tasks done ${Date.now() - started} ms after the crash; new leader ${cluster.leader()?.id} (token ${cluster.leader()?.token}); ` +
      `${state.tasks.filter((t) => t.attempt > 1).length} reassigned; ${refused} stale writes refused`,
  );
} finally {
  await cluster.close();
}
