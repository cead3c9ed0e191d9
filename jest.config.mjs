// One jest run over every package. TypeScript is transformed by swc (no type check here: `tsc -b`
// runs first in `npm test`), workspace packages map to their sources so tests need no build.
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

const base = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@muster/core$': '<rootDir>/../../packages/core/src/index.ts',
    '^@muster/core/adapter$': '<rootDir>/../../packages/core/src/adapter.ts',
    '^@muster/core/inversify$': '<rootDir>/../../packages/core/src/inversify/index.ts',
    '^@muster/core/testing$': '<rootDir>/../../packages/core/src/testing/index.ts',
    '^@muster/adapter-static$': '<rootDir>/../../packages/adapter-static/src/index.ts',
    '^@muster/adapter-k8s$': '<rootDir>/../../packages/adapter-k8s/src/index.ts',
    '^@muster/adapter-consul$': '<rootDir>/../../packages/adapter-consul/src/index.ts',
    '^@muster/cql-proxy$': '<rootDir>/../../packages/cql-proxy/src/index.ts',
    '^@muster/chaos$': '<rootDir>/../../packages/chaos/src/index.ts',
    '^@muster/fence-cassandra$': '<rootDir>/../../packages/fence-cassandra/src/index.ts',
    '^@muster-examples/adapter-memory$': '<rootDir>/../../examples/adapter-memory/src/index.ts',
    '^@muster-examples/scheduler$': '<rootDir>/../../examples/scheduler/src/index.ts',
    '^@muster-examples/di-app$': '<rootDir>/../../examples/di-app/src/index.ts',
    '^@muster-examples/serverless$': '<rootDir>/../../examples/serverless/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
};

const project = (dir, name) => ({ ...base, displayName: name, rootDir: dir, testMatch: ['<rootDir>/test/**/*.test.ts'] });

export default {
  // Jest's 5 s default is a wall-clock bound on whatever a test does: about sixty integration tests
  // talk to real servers without a timeout of their own, and on a slower or busier machine (load 26
  // on these 2 cores) they ran out of it. A test's own waits say how long a condition may take.
  testTimeout: 30_000,
  // Known leak: after backend-faults.cassandra3.test.ts (a control-node failover and every node
  // stopped, in one run) four ref'd timers of unknown owner outlive the file (drivers still
  // reconnecting), and keep jest from exiting. `npm test` runs that file in a jest process of its
  // own, so its leftovers cannot show up in other files' leak checks (the serverless example's), and
  // forceExit ends that process once its tests have finished; jest still names the leak.
  forceExit: true,
  // After jest's own summary: what was skipped per missing test server, and how to start them.
  reporters: ['default', '<rootDir>/scripts/testenv/skip-summary-reporter.mjs'],
  projects: [
    project('packages/core', 'core'),
    project('packages/adapter-static', 'adapter-static'),
    project('packages/adapter-k8s', 'adapter-k8s'),
    project('packages/adapter-consul', 'adapter-consul'),
    project('packages/cql-proxy', 'cql-proxy'),
    project('packages/chaos', 'chaos'),
    project('packages/fence-cassandra', 'fence-cassandra'),
    project('scripts/testenv', 'testenv'),
    project('scripts/start', 'start'),
    project('deploy/kubernetes', 'deploy-kubernetes'),
    project('examples/adapter-memory', 'example-adapter-memory'),
    project('examples/scheduler', 'example-scheduler'),
    project('examples/serverless', 'example-serverless'),
    project('bench', 'bench'),
    project('examples/di-app', 'example-di-app'),
  ],
};
