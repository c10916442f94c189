// Check Provider: per item, the provider the engine allows now (nothing is called); outputs go
// (with the provider's parameters and a ticket), deferred (retry_at, reason) and failed.
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { readItemPlan } from '../params';
import { StoreUnavailable } from '../store/failover';
import { checkItem } from './check';
import { deferredJson, skipView, transitionView } from '../itemView';
import { CounterDeltas, warnAll } from '../counters';
import { DEFERRED, eachItem, FAILED, GO, openEngine, stores, type Outputs } from './common';

export async function checkProvider(ctx: IExecuteFunctions): Promise<Outputs> {
	const out: Outputs = [[], [], []];
	const items = ctx.getInputData();
	const s = await stores(ctx);
	const counters = new CounterDeltas();
	const executionId = ctx.getExecutionId();
	await eachItem(ctx, out, async (i) => {
		const plan = readItemPlan(ctx, i, 2, false);
		const engine = openEngine(ctx, i, plan);
		const names = plan.requests.map((r) => r.name);
		const store = s.rows(plan.scope);
		const lease = `${executionId}:${i}:${Math.random().toString(36).slice(2, 10)}`;
		const input = items[i].json;
		const pairedItem = { item: i };
		let c;
		try {
			c = await checkItem(engine, store, s.tickets(plan.scope), names, lease, plan.scope);
		} catch (error) {
			if (!(error instanceof StoreUnavailable)) throw error;
			const item = engine.item(await store.now(), lease, '');
			const end = item.deferNow(await store.now(), 'store_unavailable');
			item.free();
			if (end.step.kind !== 'defer') throw error;
			out[DEFERRED].push({
				json: deferredJson(input, end.step.reason, end.step.retry_at_ms),
				pairedItem,
			});
			return;
		}
		const meta: IDataObject = {
			skipped: c.skipped.map((k) => skipView(names, k)),
			transitions: c.transition ? [transitionView(names[c.transition.provider], c.transition)] : [],
			correlationId: `${executionId}:${i}`,
		};
		if (store.degraded) meta.storeFallback = store.degraded;
		if (c.casRetries) meta.casRacesLost = c.casRetries;
		counters.add(plan.scope, names, c.counters, c.committed);
		const d = c.decision;
		if (d.kind === 'go') {
			const r = plan.requests[d.provider];
			out[GO].push({
				json: {
					...input,
					// What the guarded node needs: {{ $json.provider.url }}, .name, .index, …
					provider: {
						name: d.name,
						index: d.provider,
						url: r.url,
						method: r.method,
						query: r.qs,
						headers: r.headers,
						body: r.body as IDataObject,
					},
					_resilience: {
						outcome: 'go',
						provider: d.name,
						probe: d.ticket.probe,
						ticket: d.ticket,
						...meta,
					},
				},
				pairedItem,
			});
		} else if (d.kind === 'defer') {
			out[DEFERRED].push({ json: deferredJson(input, d.reason, d.retry_at_ms, meta), pairedItem });
		} else {
			out[FAILED].push({
				json: {
					...input,
					reason: d.reason,
					_resilience: { outcome: 'failed', reason: d.reason, ...meta },
				},
				pairedItem,
			});
		}
	});
	warnAll(out, await counters.write(s.rows));
	return out;
}
