// A real Consul dev agent with ACLs on (default deny); the entry's managementToken is the
// initial management token. See ../consul/agent.mjs.
import { buildConsul, downAgent, restartAgent, upAgent } from '../consul/agent.mjs';

export const name = 'consul-acl';

export async function build() {
  await buildConsul();
}

export function up() {
  return upAgent(name, { acl: true });
}

export function down(entry) {
  return downAgent(entry);
}

export function restart(entry) {
  return restartAgent(entry);
}
