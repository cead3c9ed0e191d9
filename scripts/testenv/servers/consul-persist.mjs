// A real Consul server agent (no ACLs) that keeps its state in a data dir, so `testenv restart
// consul-persist` is an ordinary restart (KV, sessions and Raft indexes survive), where a restart
// of the `consul` dev agent loses everything. See ../consul/agent.mjs.
import { buildConsul, downAgent, restartAgent, upAgent } from '../consul/agent.mjs';

export const name = 'consul-persist';

export async function build() {
  await buildConsul();
}

export function up() {
  return upAgent(name, { persist: true });
}

export function down(entry) {
  return downAgent(entry);
}

export function restart(entry) {
  return restartAgent(entry);
}
