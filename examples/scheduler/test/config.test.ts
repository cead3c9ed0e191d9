// The scheduler: section of a muster YAML: the Cassandra task table's settings, and errors at file:line:col.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { createMuster } from '@muster/core';
import { schedulerSettings } from '../src/config.js';

async function settingsOf(yaml: string) {
  const file = join(mkdtempSync(join(tmpdir(), 'scheduler-config-')), 'muster.yaml');
  writeFileSync(file, `version: 1\ndiscovery: { adapter: static, options: { members: [] } }\nscheduler:\n${yaml}`);
  await using muster = await createMuster(file);
  return schedulerSettings(muster);
}

describe('scheduler config', () => {
  test('a cassandra: section names the task table, with defaults and the fence on', async () => {
    const settings = await settingsOf(`  cassandra: { contactPoints: ['127.0.0.1:9042'], localDataCenter: dc1 }\n`);
    expect(settings.cassandra).toEqual({
      contactPoints: ['127.0.0.1:9042'],
      localDataCenter: 'dc1',
      keyspace: 'scheduler',
      table: 'tasks',
      fence: true,
    });
  });

  test('a keyspace that is not a plain CQL name is refused at its place in the file', async () => {
    await expect(settingsOf(`  cassandra: { contactPoints: [a:1], localDataCenter: dc1, keyspace: "x; DROP" }\n`)).rejects.toThrow(
      /muster\.yaml:4:\d+: scheduler\.cassandra\.keyspace: "x; DROP" is not a lower-case CQL name/,
    );
  });

  test('table: and cassandra: together are refused', async () => {
    await expect(
      settingsOf(`  table: http://127.0.0.1:7070\n  cassandra: { contactPoints: [a:1], localDataCenter: dc1 }\n`),
    ).rejects.toThrow(/muster\.yaml:5:\d+: scheduler\.cassandra: names a task table, and so does scheduler\.table/);
  });
});
