// Third-party Cassandra drivers for the proxy's driver tests, cached outside the repo:
//   the Python cassandra-driver (pure Python) in a venv, and the Java driver 4.x and 3.x jars via Maven.
// Each is installed on first use into a temporary sibling and renamed into place when complete.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { atomicDir, cacheDir, log, run } from './lib.mjs';

export const PYTHON_DRIVER_VERSION = process.env.MUSTER_PY_CASSANDRA_DRIVER || '3.30.1';
export const JAVA_DRIVER_VERSION = process.env.MUSTER_JAVA_DRIVER || '4.17.0';
// The 3.x line (com.datastax.cassandra:cassandra-driver-core) builds its metadata from system.peers
// its own way; lz4-java and snappy-java are what its LZ4 and SNAPPY frame compression load.
export const JAVA_DRIVER3_VERSION = process.env.MUSTER_JAVA_DRIVER3 || '3.11.5';
const JAVA_DRIVER3_COMPRESSION = [
  ['org.lz4', 'lz4-java', '1.8.0'],
  ['org.xerial.snappy', 'snappy-java', '1.1.10.5'],
];

/** Whether `cmd args` runs at all (the tool is installed). */
export function hasTool(cmd, args = ['--version']) {
  // The caller's process.env, PATH included: under jest that is the test's copy, not the process's.
  const r = spawnSync(cmd, args, { stdio: 'ignore', env: process.env });
  return r.error === undefined && r.status === 0;
}

// The compression modules the Python driver loads for lz4 and snappy frames (and v5 LZ4 segments).
export const PYTHON_COMPRESSION = ['lz4==4.4.5', 'python-snappy==0.7.3'];

/**
 * The venv's python with cassandra-driver installed (pure Python, no C extensions), plus `extras`
 * (pinned requirements, e.g. PYTHON_COMPRESSION): each set of extras is a venv of its own.
 */
export async function pythonDriver({ extras = [] } = {}) {
  const suffix = extras.length ? `-${extras.map((e) => e.replace(/[^A-Za-z0-9.]+/g, '_')).join('-')}` : '';
  const dir = join(cacheDir(), `py-cassandra-driver-${PYTHON_DRIVER_VERSION}${suffix}`);
  const python = join(dir, 'bin', 'python');
  if (existsSync(python)) return { python, version: PYTHON_DRIVER_VERSION };
  log(`cassandra-driver ${PYTHON_DRIVER_VERSION}${extras.length ? ` with ${extras.join(', ')}` : ''}: installing into ${dir}`);
  await atomicDir(dir, async (tmp) => {
    await run('python3', ['-m', 'venv', tmp]);
    // Only bin/python is used afterwards: it still works once the folder is renamed.
    await run(
      join(tmp, 'bin', 'python'),
      ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', `cassandra-driver==${PYTHON_DRIVER_VERSION}`, ...extras],
      {
        env: { ...process.env, CASS_DRIVER_NO_EXTENSIONS: '1', CASS_DRIVER_NO_CYTHON: '1' },
      },
    );
  });
  return { python, version: PYTHON_DRIVER_VERSION };
}

const dependency = ([group, artifact, version]) => `    <dependency>
      <groupId>${group}</groupId>
      <artifactId>${artifact}</artifactId>
      <version>${version}</version>
    </dependency>
`;

const pom = (dependencies) => `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>muster.testenv</groupId>
  <artifactId>java-driver-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${dependencies.map(dependency).join('')}  </dependencies>
</project>
`;

/** A folder of the runtime jars of `dependencies` ([group, artifact, version]); `main` is the jar that proves it complete. */
async function mavenJars(folder, main, dependencies) {
  const dir = join(cacheDir(), folder, 'lib');
  if (existsSync(join(dir, main))) return dir;
  log(`${main}: fetching jars from Maven Central into ${dir}`);
  await atomicDir(dir, async (tmp) => {
    const pomFile = join(tmp, 'pom.xml');
    writeFileSync(pomFile, pom(dependencies));
    await run('mvn', [
      '-q',
      '-B',
      '-Dstyle.color=never',
      `-Dmaven.repo.local=${cacheDir('m2')}`,
      '-f',
      pomFile,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${tmp}`,
    ]);
    if (!readdirSync(tmp).includes(main)) throw new Error(`${main} missing after mvn`);
  });
  return dir;
}

/** A folder of the Java driver's runtime jars (java-driver-core and its dependencies). */
export async function javaDriverJars() {
  const dependencies = [['com.datastax.oss', 'java-driver-core', JAVA_DRIVER_VERSION]];
  const dir = await mavenJars(`java-driver-${JAVA_DRIVER_VERSION}`, `java-driver-core-${JAVA_DRIVER_VERSION}.jar`, dependencies);
  return { dir, version: JAVA_DRIVER_VERSION };
}

/** A folder of the Java driver 3.x's runtime jars (cassandra-driver-core, its dependencies, lz4-java, snappy-java). */
export async function javaDriver3Jars() {
  const dependencies = [['com.datastax.cassandra', 'cassandra-driver-core', JAVA_DRIVER3_VERSION], ...JAVA_DRIVER3_COMPRESSION];
  const main = `cassandra-driver-core-${JAVA_DRIVER3_VERSION}.jar`;
  const dir = await mavenJars(`java-driver3-${JAVA_DRIVER3_VERSION}`, main, dependencies);
  return { dir, version: JAVA_DRIVER3_VERSION };
}
