// Check Provider: per item, the provider the engine allows now (nothing is called); outputs go
// (with the provider's parameters and a ticket), deferred (retry_at, reason) and failed.
import { forVersion } from '../plan/versionDefaults';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { readItemPlan } from '../params';
import { StoreUnavailable } from '../store/failover';
import { checkItem } from './check';
import { checkedData, deferredJson } from '../resilience';
import { correlationId } from '../errorItem';
import { CounterDeltas, warnAll } from '../counters';
import { DEFERRED, eachItem, FAILED, GO, openEngine, stores, type Outputs } from './common';

export async function checkProvider(ctx: IExecuteFunctions): Promise<Outputs> {
	const out: Outputs = [[], [], []];
	const items = ctx.getInputData();
	const s = await stores(ctx);
	const counters = new CounterDeltas();
	await eachItem(ctx, out, async (i) => {
		const plan = readItemPlan(ctx, i, 2, false);
		// From 2.1 the check holds a slot of the fleet's learned limit until its report.
		forVersion(plan.config, 'guard', ctx.getNode().typeVersion, ctx.getWorkflow().id);
		const engine = openEngine(ctx, i, plan);
		const names = plan.requests.map((r) => r.name);
		const store = s.rows(plan.scope);
		const correlation = correlationId(ctx, i);
		const lease = `${correlation}:${Math.random().toString(36).slice(2, 10)}`;
		const input = items[i].json;
		const pairedItem = { item: i };
		let c;
		try {
			c = await checkItem(engine, store, s.tickets(plan.scope), names, lease, plan.scope);
		} catch (error) {
			if (!(error instanceof StoreUnavailable)) throw error;
			const item = engine.item(await store.now(), lease, '');
			const end = item.deferNow(await store.now(), error.reason);
			item.free();
			if (end.step.kind !== 'defer') throw error;
			const meta = { correlationId: correlation };
			out[DEFERRED].push({
				json: deferredJson(input, end.step.reason, end.step.retry_at_ms, meta),
				pairedItem,
			});
			return;
		}
		const d = c.decision;
		const meta = checkedData(d, c, names, correlation, {
			storeFallback: store.degraded,
			storeWarning: store.warning,
			casRetries: c.casRetries,
		});
		counters.add(plan.scope, names, c.counters, c.committed);
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
					_resilience: meta,
				},
				pairedItem,
			});
		} else if (d.kind === 'defer') {
			out[DEFERRED].push({ json: deferredJson(input, d.reason, d.retry_at_ms, meta), pairedItem });
		} else {
			out[FAILED].push({ json: { ...input, reason: d.reason, _resilience: meta }, pairedItem });
		}
	});
	warnAll(out, await counters.write(s.rows));
	return out;
}
