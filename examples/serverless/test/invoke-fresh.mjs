// node invoke-fresh.mjs <handler.js> <invocations> close|no-close
// Invokes the handler in this fresh process and prints, as JSON, what is left afterwards.
import { createHook } from 'node:async_hooks';
import { handleTypes } from './handle-types.mjs';

const [file, count, mode] = process.argv.slice(2);
// stdout/stderr are created on first use (Node's net touches process.stderr when a socket is
// destroyed); make them part of the baseline, they are the process's own.
void process.stdout;
void process.stderr;
const baseline = process.getActiveResourcesInfo();
const added = (after) => {
  const left = [...baseline];
  return after.filter((type) => {
    const i = left.indexOf(type);
    if (i >= 0) left.splice(i, 1);
    return i < 0;
  });
};
const live = new Map();
let recording = true;
createHook({
  init(id, type) {
    if (recording && handleTypes.has(type)) live.set(id, type);
  },
  destroy(id) {
    live.delete(id);
  },
}).enable();
const { handler, close } = await import(file);
const results = [];
for (let i = 0; i < Number(count); i++) results.push(await handler({}));
if (mode === 'close') await close();
recording = false; // what follows is this script's own waiting
// What holds the loop; Node's module loader may still be closing a file it read (CloseReq), so
// give in-flight requests a moment before looking.
const spin = async (until) => {
  while (!until()) await new Promise((resolve) => setImmediate(resolve));
};
let deadline = Date.now() + 500;
await spin(() => added(process.getActiveResourcesInfo()).length === 0 || Date.now() > deadline);
const activeAfter = added(process.getActiveResourcesInfo());
// Then let core's unref'd release timeout (≤ 2 s for a 3 s lease) run out.
deadline = Date.now() + Number(process.env.SETTLE_MS ?? 2500);
await spin(() => live.size === 0 || Date.now() > deadline);
process.stdout.write(JSON.stringify({ results, activeAfter, liveAfter: [...live.values()] }));
