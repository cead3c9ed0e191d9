import type { DiscoveryEvent, Endpoint } from '../ports/discovery.js';
import { eventSummary, idsOf, isChange, retryWindow, watching, type DiscoveryCases } from './discovery-cases.js';
import { assert, eventually, nextWithin, skipCase, type SuiteRunner } from './runner.js';

/**
 * The faults a watch must survive: a backend that fails and recovers (one `degraded` per outage,
 * keeping the last endpoints, then `recovered` and the difference), and a backend restart under a
 * running watch (the changes made meanwhile arrive as the difference: no duplicate, no gap).
 */
export function discoveryFaultCases(runner: SuiteRunner, { propagation, test, setup, options }: DiscoveryCases): void {
  const outageCase = 'a backend that fails then recovers: one degraded keeping the last endpoints, then recovered and the difference';
  if (!options.faults.outage) skipCase(runner, outageCase, 'the control cannot make this backend unreachable (no outage)');
  else
    test(outageCase, async () => {
      const { discovery, control } = await setup();
      const outage = control.outage;
      assert.ok(outage, `${options.name}: the control has no outage; declare faults.outage = false to skip this case`);
      const { watch } = await watching(discovery, control, [{ id: 'steady', address: '127.0.0.31', port: 9042, ready: true }], propagation);

      await outage.begin();
      try {
        const degraded = await nextWithin(watch, retryWindow(options, propagation), 'a degraded event once the backend was unreachable');
        assert.equal(degraded.type, 'degraded', `expected degraded first, got ${eventSummary(degraded)}`);
        assert.deepEqual(idsOf(degraded.endpoints), ['steady'], 'degraded must carry the last known endpoints, never an empty list');
        const code = (degraded as Extract<DiscoveryEvent, { type: 'degraded' }>).error?.code;
        assert.match(String(code), /^MUSTER_/, 'degraded.error is not a MusterError');
        // Membership moves on while this client cannot see it.
        await control.add({ id: 'joined-in-outage', address: '127.0.0.32', port: 9042, ready: true });
        if (outage.attempts) {
          // Let the client retry (and fail) twice more, so a degraded per attempt would show.
          const seen = outage.attempts();
          await eventually(
            'two more attempts during the outage',
            async () => (outage.attempts!() >= seen + 2 ? true : undefined),
            retryWindow(options, propagation),
          );
        }
      } finally {
        await outage.end();
      }

      const after: DiscoveryEvent[] = [];
      while (!after.some((e) => isChange(e) && e.endpoint.id === 'joined-in-outage')) {
        after.push(await nextWithin(watch, retryWindow(options, propagation), 'the change made during the outage'));
        assert.ok(after.length <= 10, `no convergence after the outage: ${after.map(eventSummary).join(' ')}`);
      }
      assert.deepEqual(
        after.map(eventSummary),
        ['recovered[steady]', 'added:joined-in-outage[joined-in-outage,steady]'],
        'after an outage: exactly recovered, then the difference (a second degraded means one per failed attempt)',
      );
      assert.deepEqual(await discovery.list(control.service), after.at(-1)!.endpoints, 'list() differs from the last snapshot');
      await watch.return?.();
    });

  const restartCase = 'a backend restart mid-watch: changes made while it was down arrive as the difference, no duplicate, no gap';
  if (!options.faults.restart) skipCase(runner, restartCase, 'the control cannot restart this backend (no restart)');
  else
    test(restartCase, async () => {
      const { discovery, control } = await setup();
      const restart = control.restart?.bind(control);
      assert.ok(restart, `${options.name}: the control has no restart(); declare faults.restart = false to skip this case`);
      const { watch, snapshot } = await watching(
        discovery,
        control,
        [
          { id: 'leaves', address: '127.0.0.51', port: 9042, ready: true },
          { id: 'stays', address: '127.0.0.52', port: 9042, ready: true },
        ],
        propagation,
      );

      await restart(async () => {
        await control.remove('leaves');
        await control.setReady('stays', false);
        await control.add({ id: 'arrives', address: '127.0.0.53', port: 9042, ready: true });
      });

      // Fold the changes: each must apply to the state before it, or it is a duplicate or a gap.
      const state = new Map<string, Endpoint>(snapshot.endpoints.map((e) => [e.id, e]));
      const seen: string[] = [];
      const converged = () =>
        idsOf([...state.values()])
          .sort()
          .join() === 'arrives,stays' && state.get('stays')?.ready === false;
      while (!converged()) {
        const event = await nextWithin(
          watch,
          retryWindow(options, propagation),
          `convergence after the restart (so far: ${seen.join(' ')})`,
        );
        seen.push(eventSummary(event));
        if (isChange(event)) {
          const id = event.endpoint.id;
          if (event.type === 'added') assert.ok(!state.has(id), `duplicate: added ${id}, which was already there (${seen.join(' ')})`);
          else assert.ok(state.has(id), `gap: ${event.type} ${id}, which was never added (${seen.join(' ')})`);
          if (event.type === 'removed') state.delete(id);
          else state.set(id, event.endpoint);
        } else {
          assert.ok(event.type === 'degraded' || event.type === 'recovered', `a second snapshot mid-watch: ${seen.join(' ')}`);
          assert.deepEqual(idsOf(event.endpoints), [...state.keys()].sort(), `${event.type} does not carry the last known endpoints`);
        }
        assert.ok(seen.length <= 12, `no convergence after the restart: ${seen.join(' ')}`);
      }
      const last = await discovery.list(control.service);
      assert.deepEqual(idsOf(last), ['arrives', 'stays']);
      assert.equal(last[1]!.ready, false);
      await watch.return?.();
    });
}
