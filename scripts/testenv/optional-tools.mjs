// The optional tools some tests need beside the test servers: third-party drivers, compilers, binaries
// the testenv builds into its cache. One table, so every such skip says the same things the same way
// (what is missing, and the command that provides it) and takes the one path of skips.mjs: listed in
// the summary at the end of `npm test` locally, an error under CI=true.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { VERSION as CASSANDRA_VERSION, javaCommand } from './cassandra/node.mjs';
import { hasTool as runs } from './drivers.mjs';
import { rustDriverCheckPath } from './rust-driver.mjs';
import { ELECTOR_VERSION } from './servers/k8s.mjs';
import { skipFor } from './skips.mjs';

/** The testenv cache, without creating it (looking must not change the machine). */
const cache = (...parts) => join(process.env.MUSTER_TESTENV_CACHE || join(homedir(), '.cache', 'muster-testenv'), ...parts);

const electorBinary = () => cache(`k8s-elector-${ELECTOR_VERSION}`, 'k8s-elector');
const cassandraJar = () => cache(`cassandra-${CASSANDRA_VERSION}`, 'lib', `cassandra-all-${CASSANDRA_VERSION}.jar`);
/** Whether the Java that starts Cassandra (the testenv's own choice and check) is there and fits. */
const cassandraJava = () => {
  try {
    return javaCommand() !== undefined;
  } catch {
    return false;
  }
};

/** name → how to tell it is there, what is missing when it is not, and the command that provides it. */
export const OPTIONAL_TOOLS = {
  'java-driver': {
    present: () => runs('javac', ['-version']) && runs('java', ['-version']) && runs('mvn', ['-v']),
    why: 'javac, java or mvn is not installed',
    how: 'install a JDK 17 and Maven (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless maven); the driver jars are fetched on first use',
  },
  'python-driver': {
    present: () => runs('python3', ['-c', 'import venv, ensurepip']),
    why: 'python3 with venv/ensurepip is not installed',
    how: 'install Python 3 with venv (Debian/Ubuntu: apt-get install python3-venv); cassandra-driver (with lz4 and python-snappy where a test needs them) is installed into the cache on first use',
  },
  gocql: {
    present: () => runs('go', ['version']),
    why: 'go is not installed',
    how: 'install Go (https://go.dev/dl/, the version scripts/testenv/k8s/go.mod names); the gocql program is built on first use',
  },
  // The Apache gocql v2 check program: one module from the Go module proxy, built on first use.
  gocql2: {
    present: () => runs('go', ['version']),
    why: 'go is not installed',
    how: 'install Go (https://go.dev/dl/, the version scripts/testenv/k8s/go.mod names); the gocql v2 check program is built on first use',
  },
  // cqlsh 6.2 from PyPI (cassandra/cqlsh.mjs): pip-installed into the cache on first use, in CI too.
  cqlsh: {
    present: () => runs(process.env.MUSTER_PYTHON || 'python3', ['-m', 'pip', '--version']),
    why: 'python3 with pip is not installed',
    how: 'install Python 3 with pip (Debian/Ubuntu: apt-get install python3-pip); cqlsh is installed into the cache on first use',
  },
  openssl: {
    present: () => runs('openssl', ['version']),
    why: 'openssl is not installed',
    how: 'install openssl (Debian/Ubuntu: apt-get install openssl)',
  },
  'k8s-elector': {
    present: () => existsSync(electorBinary()) || process.env.MUSTER_BUILD_ELECTOR === '1',
    why: `${electorBinary()} is not built`,
    how: 'npm run testenv -- build k8s (or MUSTER_BUILD_ELECTOR=1 lets the test build it)',
  },
  // Its first build compiles ~110 crates (20 min on a busy 2-core machine): too dear for every cold CI
  // run, so it is built on request only, and a missing build is listed without failing CI.
  'rust-driver': {
    present: () => existsSync(rustDriverCheckPath()) || (process.env.MUSTER_RUST_DRIVER === 'build' && runs('cargo', ['--version'])),
    why: 'the Rust scylla driver check is not built',
    how: 'MUSTER_RUST_DRIVER=build npm test (needs cargo; builds into the testenv cache once per source version)',
    builtOnRequest: true,
  },
  'cassandra-cache': {
    present: () => existsSync(cassandraJar()) && cassandraJava(),
    why: `Cassandra ${CASSANDRA_VERSION} is not in the testenv cache (${cassandraJar()}) or no Java 11 or 17 runs it ($MUSTER_CASSANDRA_JAVA, $JAVA_HOME/bin/java or java)`,
    how: 'npm run testenv -- build cassandra (needs Java 17 or 11, and Maven)',
  },
};

/**
 * Whether the optional tool `name` is there for this test file. When it is not, the skip is recorded
 * for the summary (locally) or thrown (CI=true). A file may name an opt-out variable (`optOut`): set
 * to `off` it turns the tool off for that file only, a choice rather than a gap, listed and not
 * failing CI; so is a tool built only on request.
 */
export function testTool(name, { optOut } = {}) {
  const tool = OPTIONAL_TOOLS[name];
  if (!tool) throw new Error(`testTool('${name}'): unknown tool; known: ${Object.keys(OPTIONAL_TOOLS).join(', ')}`);
  if (optOut && process.env[optOut] === 'off') {
    skipFor({ kind: 'tool', name, why: `turned off by ${optOut}=off`, how: `unset ${optOut}`, optedOut: true });
    return false;
  }
  if (tool.present()) return true;
  skipFor({ kind: 'tool', name, why: tool.why, how: tool.how, optedOut: tool.builtOnRequest === true });
  return false;
}
