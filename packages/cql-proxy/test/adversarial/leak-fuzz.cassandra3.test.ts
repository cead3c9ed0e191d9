// Seeded random reads of the system keyspaces, written every way CQL allows (case, quoting,
// comments and whitespace between any two tokens, the keyspace from the name, USE or the v5
// keyspace flag, selectors with functions, casts, JSON, aliases, element selection, WHERE forms),
// sent as QUERY and as PREPARE + EXECUTE through a proxy on 127.0.0.50 in front of the three-node
// testenv Cassandra. Whatever the proxy does with each (answers it, refuses it, forwards it), the
// answer must carry no backend address, host id or ring token. MUSTER_ADVERSARIAL_SEED replays a
// run (the seed is printed), MUSTER_LEAK_FUZZ_CASES sets its length.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { Consistency } from '../../src/protocol/consistency.js';
import { splitBody } from '../../src/protocol/envelope.js';
import { Opcode, type Frame } from '../../src/protocol/frame.js';
import { encodeExecute, encodePrepare, encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { decodeResult } from '../../src/protocol/result.js';
import { freePort, startProxy, type CassandraEntry, type RunningProxy } from '../proxy/harness.js';
import { RawClient } from '../proxy/raw-client.js';
import { backendIdentity, leaks, type BackendIdentity } from '../proxy/system-walk.js';
import { answerOf } from './answer.js';
import { seeded } from './cases.js';

const backend = testServer<CassandraEntry>('cassandra3');
const seed = Number(process.env.MUSTER_ADVERSARIAL_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CASES = Number(process.env.MUSTER_LEAK_FUZZ_CASES ?? 500);
const TIMEOUT = Math.max(180_000, CASES * 300);

type Random = ReturnType<typeof seeded>;
const pick = <T>(random: Random, items: readonly T[]): T => items[random.int(items.length)]!;

/** What may stand between two tokens. */
const GAPS = [' ', ' ', ' ', '  ', '\n', '\t', '\r', ' /* c */ ', '/**/', ' -- c\n', ' // c\n', '\r\n', ' -- c\r', '// c\r', ' -- c\r\n'];
/** Tables that show nodes (virtual or refused), and a few that pass. */
const TABLES = [
  ['system', 'local'],
  ['system', 'peers'],
  ['system', 'peers_v2'],
  ['system', 'local'],
  ['system', 'peers_v2'],
  ['system', 'peer_events_v2'],
  ['system', 'size_estimates'],
  ['system', 'prepared_statements'],
  ['system_views', 'gossip_info'],
  ['system_views', 'clients'],
  ['system_views', 'settings'],
  ['system_views', 'queries'],
  ['system_distributed', 'repair_history'],
  ['system_traces', 'sessions'],
  ['system_schema', 'keyspaces'],
] as const;
const COLUMNS = ['peer', 'rpc_address', 'host_id', 'tokens', 'data_center', 'broadcast_address', 'native_address', 'listen_address', 'key'];
/** Selector templates; `$` is a column. */
const SELECTORS = [
  '*',
  '$',
  '$, $',
  '"$"',
  '$ AS x',
  '$ AS "X y"',
  'JSON *',
  'JSON $',
  'DISTINCT $',
  'toJson($)',
  'system.tojson($)',
  'CAST($ AS text)',
  'cast($ as blob)',
  'blobAsText(textAsBlob(CAST($ AS text)))',
  'writetime(rack)',
  'ttl(rack)',
  'token($)',
  'count(*)',
  'COUNT(1)',
  'max($)',
  '$[0]',
  'tokens[0]',
  '$, 4 / 2',
  '(text)$',
  '$, now()',
  "'x', $",
];
const WHERES = [
  '',
  '',
  " WHERE key = 'local'",
  " WHERE peer = '127.0.0.51'",
  " WHERE peer IN ('127.0.0.51', '10.1.1.1')",
  " WHERE peer = '127.0.0.51' AND peer_port = 9042",
  ' WHERE token(peer) > 0',
  " WHERE data_center = 'datacenter1' ALLOW FILTERING",
  " WHERE peer > '0' ALLOW FILTERING",
  ' WHERE host_id = 00000000-0000-0000-0000-000000000000 ALLOW FILTERING',
];
const SUFFIXES = [
  '',
  '',
  ';',
  ' LIMIT 1',
  ' PER PARTITION LIMIT 1',
  ' ALLOW FILTERING',
  ' LIMIT 1;',
  ' GROUP BY peer',
  ' USING TIMEOUT 5s',
];

/** How the keyspace is given: in the name, by USE on the connection, or (v5) by the keyspace flag. */
type KeyspaceBy = 'name' | 'use' | 'flag';

interface Probe {
  readonly statement: string;
  readonly keyspace: string;
  readonly by: KeyspaceBy;
  readonly prepare: boolean;
}

function spell(random: Random, name: string): string {
  switch (random.int(5)) {
    case 0:
      return name.toUpperCase();
    case 1:
      return `"${name}"`;
    case 2:
      return name.replace(/^./, (c) => c.toUpperCase());
    default:
      return name;
  }
}

function keyword(random: Random, word: string): string {
  return random.int(3) === 0 ? word.toLowerCase() : random.int(2) === 0 ? word : word.replace(/^./, (c) => c.toLowerCase());
}

function probe(random: Random): Probe {
  const [keyspace, table] = pick(random, TABLES);
  const gap = () => pick(random, GAPS);
  const selector = pick(random, SELECTORS).replace(/\$/g, () => pick(random, COLUMNS));
  const by: KeyspaceBy = pick(random, ['name', 'name', 'name', 'use', 'flag'] as const);
  const name =
    by === 'name' ? `${spell(random, keyspace)}${gap().trim() === '' ? '' : gap()}.${spell(random, table)}` : spell(random, table);
  const lead = random.int(4) === 0 ? gap() : '';
  const statement = `${lead}${keyword(random, 'SELECT')}${gap()}${selector}${gap()}${keyword(random, 'FROM')}${gap()}${name}${pick(random, WHERES)}${pick(random, SUFFIXES)}`;
  return { statement, keyspace, by, prepare: random.int(3) === 0 };
}

(backend ? describe : describe.skip)(
  `seeded system-table reads through a proxy in front of cassandra3 (MUSTER_ADVERSARIAL_SEED=${seed})`,
  () => {
    let running: RunningProxy;
    let identity: BackendIdentity;
    const clients = new Map<string, RawClient>();
    let stream = 0;

    beforeAll(async () => {
      console.log(`leak fuzz seed ${seed}, ${CASES} cases (replay with MUSTER_ADVERSARIAL_SEED=${seed})`);
      identity = await backendIdentity(backend!.contactPoints);
      const port = await freePort('127.0.0.50', '127.0.0.51');
      running = await startProxy(backend!, {
        host: '127.0.0.50',
        port,
        // A second member, so system.peers has a virtual row to show.
        members: [
          { id: 'proxy-0', address: '127.0.0.50', port },
          { id: 'proxy-1', address: '127.0.0.51', port },
        ],
        proxy: { advertise: { address: '127.0.0.50' }, peerProbe: { mode: 'off' } },
      });
    }, TIMEOUT);
    afterAll(async () => {
      for (const client of clients.values()) client.close();
      await running?.stop();
    }, TIMEOUT);

    /** A connection per (version, keyspace in use): v4 for names and USE, v5 for the keyspace flag. */
    async function clientFor(p: Probe): Promise<{ client: RawClient; version: 4 | 5 }> {
      const version = p.by === 'flag' ? 5 : 4;
      const key = `${version}/${p.by === 'use' ? p.keyspace : ''}`;
      let client = clients.get(key);
      if (!client || client.closed) {
        client = await RawClient.open(running.address);
        client.send(version, 0, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
        if ((await client.next(0, 60_000))?.opcode !== Opcode.READY) throw new Error('STARTUP failed');
        if (version === 5) client.useSegments(false);
        if (p.by === 'use') {
          client.send(
            version,
            1,
            Opcode.QUERY,
            encodeQuery({ query: `USE ${p.keyspace}`, parameters: { consistency: Consistency.ONE } }, version),
          );
          await client.next(1, 60_000);
        }
        clients.set(key, client);
      }
      return { client, version };
    }

    async function ask(client: RawClient, version: number, opcode: number, body: Buffer): Promise<Frame> {
      const s = (stream = (stream % 30_000) + 2);
      client.send(version, s, opcode, body);
      const frame = await client.next(s, 60_000);
      if (!frame) throw new Error('the proxy closed the connection');
      return frame;
    }

    const findings = (frame: Frame, version: number): string[] => leaks(answerOf(frame, version), identity);

    // Found by this fuzz (seed 5): a line comment ended by a lone \r hid the table from the proxy, not from Cassandra.
    it.each([
      'SELECT peer FROM -- x\rsystem.peers',
      '-- x\rSELECT peer, host_id FROM system.peers_v2',
      'SELECT tokens // x\rFROM system.local',
      'SELECT * FROM -- x\rsystem_views.gossip_info',
    ])('a read the proxy once misread: %j', async (statement) => {
      const { client, version } = await clientFor({ statement, keyspace: 'system', by: 'name', prepare: false });
      for (const [opcode, body] of [
        [Opcode.QUERY, encodeQuery({ query: statement, parameters: { consistency: Consistency.ONE } }, version)],
        [Opcode.PREPARE, encodePrepare({ query: statement }, version)],
      ] as const) {
        expect(findings(await ask(client, version, opcode, body), version)).toEqual([]);
      }
    });

    it(
      `${CASES} reads`,
      async () => {
        const random = seeded(seed);
        const failures: string[] = [];
        const outcomes = { rows: 0, refused: 0, other: 0 };
        for (let i = 0; i < CASES; i++) {
          const p = probe(random);
          const { client, version } = await clientFor(p);
          const parameters = { consistency: Consistency.ONE, ...(p.by === 'flag' ? { keyspace: p.keyspace } : {}) };
          const answers: Frame[] = [];
          if (p.prepare) {
            const prepared = await ask(
              client,
              version,
              Opcode.PREPARE,
              encodePrepare({ query: p.statement, ...(p.by === 'flag' ? { keyspace: p.keyspace } : {}) }, version),
            );
            answers.push(prepared);
            if (prepared.opcode === Opcode.RESULT) {
              const result = decodeResult(splitBody(prepared).message, version);
              if (result.kind === 'Prepared') {
                const execute = {
                  id: result.id,
                  ...(result.resultMetadataId ? { resultMetadataId: result.resultMetadataId } : {}),
                  parameters,
                };
                answers.push(await ask(client, version, Opcode.EXECUTE, encodeExecute(execute, version)));
              }
            }
          } else {
            answers.push(await ask(client, version, Opcode.QUERY, encodeQuery({ query: p.statement, parameters }, version)));
          }
          for (const answer of answers) {
            const found = findings(answer, version);
            if (found.length > 0)
              failures.push(
                `case ${i} (${p.prepare ? 'PREPARE+EXECUTE' : 'QUERY'}, keyspace by ${p.by}) ${JSON.stringify(p.statement)}: ${found.join('; ')}`,
              );
          }
          const last = answers[answers.length - 1]!;
          if (last.opcode === Opcode.ERROR) outcomes.refused++;
          else if (last.opcode === Opcode.RESULT) outcomes.rows++;
          else outcomes.other++;
        }
        console.log(
          `leak fuzz seed ${seed}: ${CASES} cases, ${outcomes.rows} answered, ${outcomes.refused} errors, ${failures.length} leaks`,
        );
        expect(failures).toEqual([]);
      },
      TIMEOUT,
    );
  },
);
