// A real Consul dev agent (no ACLs) on free loopback ports; see ../consul/agent.mjs.
import { buildConsul, downAgent, restartAgent, upAgent } from '../consul/agent.mjs';

export const name = 'consul';

export async function build() {
  await buildConsul();
}

export function up() {
  return upAgent(name);
}

export function down(entry) {
  return downAgent(entry);
}

export function restart(entry) {
  return restartAgent(entry);
}
