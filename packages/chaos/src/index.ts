export { runChaos, type RunOptions, type RunResult } from './orchestrator.js';
export { judge, formatVerdict, violationKinds, type Verdict, type Violation, type ViolationKind, type Spread } from './verdict.js';
export { checkLock, checkLiveness } from './lock-checks.js';
export { checkHeartbeats } from './heartbeat-checks.js';
export type { Bounds, FaultEvent, FaultKind, HeartbeatSample, HistoryEvent, LockEvent } from './history.js';
export type { BackendProfile } from './backends/profile.js';
export { staticProfile } from './backends/static.js';
export { TcpProxy } from './tcp-proxy.js';
export { Random, newSeed } from './random.js';
