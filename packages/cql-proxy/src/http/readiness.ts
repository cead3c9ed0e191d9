import type { NodeState } from '../proxy/node-health.js';
import type { Readiness } from './server.js';

export interface ReadinessInputs {
  /** The node the control connection is on, undefined while it is down. */
  readonly controlNode: string | undefined;
  readonly nodes: readonly NodeState[];
  readonly registered: boolean;
  /** False for a static member removed from the members file: it is no longer part of the cluster. */
  readonly listed: boolean;
  readonly draining: boolean;
}

/**
 * Ready means a driver sent here gets answers: the control connection is up (topology and schema
 * events flow), at least one backend node answers, the instance is registered (and, with static
 * membership, still listed) and not draining.
 * The body says which check failed and, for sick nodes, why.
 */
export function proxyReadiness(inputs: ReadinessInputs): Readiness {
  const healthy = inputs.nodes.filter((n) => n.healthy);
  const backend = inputs.controlNode !== undefined && healthy.length > 0;
  const reasons: string[] = [];
  if (inputs.controlNode === undefined) reasons.push('no control connection to the backend');
  if (healthy.length === 0) reasons.push('no backend node answers');
  if (!inputs.registered) reasons.push('not registered in discovery yet');
  if (!inputs.listed) reasons.push('not in the members list');
  if (inputs.draining) reasons.push('draining');
  const sick = inputs.nodes.filter((n) => !n.healthy).map((n) => `${n.node}: ${n.reason ?? 'sick'}`);
  return {
    ready: reasons.length === 0,
    checks: {
      backend,
      registered: inputs.registered,
      listed: inputs.listed,
      draining: inputs.draining,
      controlNode: inputs.controlNode ?? 'none',
      healthyNodes: `${healthy.length} of ${inputs.nodes.length}`,
      ...(sick.length > 0 ? { sickNodes: sick.join('; ') } : {}),
      ...(reasons.length > 0 ? { reason: reasons.join('; ') } : {}),
    },
  };
}
