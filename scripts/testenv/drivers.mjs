// Third-party Cassandra drivers for the proxy's driver tests, cached outside the repo:
//   the Python cassandra-driver (pure Python) in a venv, and the Java driver 4.x jars via Maven.
// Each is installed on first use into a temporary sibling and renamed into place when complete.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { atomicDir, cacheDir, log, run } from './lib.mjs';

export const PYTHON_DRIVER_VERSION = process.env.MUSTER_PY_CASSANDRA_DRIVER || '3.30.1';
export const JAVA_DRIVER_VERSION = process.env.MUSTER_JAVA_DRIVER || '4.17.0';

/** Whether `cmd args` runs at all (the tool is installed). */
export function hasTool(cmd, args = ['--version']) {
  // The caller's process.env, PATH included: under jest that is the test's copy, not the process's.
  const r = spawnSync(cmd, args, { stdio: 'ignore', env: process.env });
  return r.error === undefined && r.status === 0;
}

/** The venv's python with cassandra-driver installed (pure Python, no C extensions). */
export async function pythonDriver() {
  const dir = join(cacheDir(), `py-cassandra-driver-${PYTHON_DRIVER_VERSION}`);
  const python = join(dir, 'bin', 'python');
  if (existsSync(python)) return { python, version: PYTHON_DRIVER_VERSION };
  log(`cassandra-driver ${PYTHON_DRIVER_VERSION}: installing into ${dir}`);
  await atomicDir(dir, async (tmp) => {
    await run('python3', ['-m', 'venv', tmp]);
    // Only bin/python is used afterwards: it still works once the folder is renamed.
    await run(
      join(tmp, 'bin', 'python'),
      ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', `cassandra-driver==${PYTHON_DRIVER_VERSION}`],
      {
        env: { ...process.env, CASS_DRIVER_NO_EXTENSIONS: '1', CASS_DRIVER_NO_CYTHON: '1' },
      },
    );
  });
  return { python, version: PYTHON_DRIVER_VERSION };
}

const pom = (version) => `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>muster.testenv</groupId>
  <artifactId>java-driver-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>com.datastax.oss</groupId>
      <artifactId>java-driver-core</artifactId>
      <version>${version}</version>
    </dependency>
  </dependencies>
</project>
`;

/** A folder of the Java driver's runtime jars (java-driver-core and its dependencies). */
export async function javaDriverJars() {
  const dir = join(cacheDir(), `java-driver-${JAVA_DRIVER_VERSION}`, 'lib');
  if (existsSync(join(dir, `java-driver-core-${JAVA_DRIVER_VERSION}.jar`))) return { dir, version: JAVA_DRIVER_VERSION };
  log(`java-driver ${JAVA_DRIVER_VERSION}: fetching jars from Maven Central into ${dir}`);
  await atomicDir(dir, async (tmp) => {
    const pomFile = join(tmp, 'pom.xml');
    writeFileSync(pomFile, pom(JAVA_DRIVER_VERSION));
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
    if (!readdirSync(tmp).includes(`java-driver-core-${JAVA_DRIVER_VERSION}.jar`)) {
      throw new Error(`java-driver-core-${JAVA_DRIVER_VERSION}.jar missing after mvn`);
    }
  });
  return { dir, version: JAVA_DRIVER_VERSION };
}
