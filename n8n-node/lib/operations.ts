// Get Provider State and Reset Provider: the same store, read or cleared; what the rows mean
// (the alert-once breaker's gauge: 0 closed, 1 half-open, 2 open; live leases) is the engine's `inspect`.
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import type { Engine } from './engine';
import type { ItemPlan } from './params';
import { COUNTER_NAMES, ROW_SEPARATOR } from './engineConstants';
import { KINDS } from './store/rowCodec';
import type { StateStore } from './store/types';

/** Millionths of the prices' unit (as the engine and the store count spend) in units. */
const units = (micros: number) => micros / 1e6;

export async function providerState(
	engine: Engine,
	store: StateStore,
	plan: ItemPlan,
	storeKind: string,
): Promise<INodeExecutionData[]> {
	const names = plan.requests.map((r) => r.name);
	const snap = await store.read(names);
	const counters = await store.readCounters(names);
	const iso = (ms: number | null) => (ms ? new Date(ms).toISOString() : null);
	return names.map((name, i) => {
		const s = engine.inspect(
			snap.rows.slice(i * KINDS.length, (i + 1) * KINDS.length).join(ROW_SEPARATOR),
			snap.now,
			i,
		);
		const c = counters[name] ?? {};
		const json: IDataObject = {
			provider: name,
			scope: plan.scope,
			store: storeKind,
			state: s.state,
			state_gauge: s.state_gauge,
			open_until: iso(s.open_until_ms),
			trips: s.trips,
			recent_failures: s.recent_failures,
			last_failure: s.last_failure,
			probes_in_flight: s.probes_in_flight,
			gate_closed_until: iso(s.gate_closed_until_ms),
			in_flight: s.in_flight,
			latency_p50_ms: s.latency_p50_ms,
			latency_p95_ms: s.latency_p95_ms,
			first_chunk_p50_ms: s.first_chunk_p50_ms,
			first_chunk_p95_ms: s.first_chunk_p95_ms,
			concurrency: s.concurrency,
			concurrency_congested_at: iso(s.concurrency_congested_at_ms),
			concurrency_in_flight: s.concurrency_in_flight,
			waiting: s.waiting,
			heaviest_keys: s.heaviest_keys,
			tokens_last_minute: s.tokens_last_minute,
			tokens_left_minute: s.tokens_left_minute,
			input_tokens_left_minute: s.input_tokens_left_minute,
			output_tokens_left_minute: s.output_tokens_left_minute,
			spent_period: units(s.spent_period_micros),
			spend_left_period:
				s.spend_left_period_micros === null ? null : units(s.spend_left_period_micros),
			period_ends: iso(s.period_ends_ms),
			counters: {
				...Object.fromEntries(COUNTER_NAMES.map((k) => [k, c[k] ?? 0])),
				tokens_input: c['tokens:input'] ?? 0,
				tokens_output: c['tokens:output'] ?? 0,
				tokens_estimated: c['tokens:estimated'] ?? 0,
				spend: units(c.spend_micros ?? 0),
				token_limited: c.token_limited ?? 0,
			},
		};
		return { json, pairedItem: { item: 0 } };
	});
}

export async function resetProviders(
	ctx: IExecuteFunctions,
	store: StateStore,
	plan: ItemPlan,
): Promise<INodeExecutionData[]> {
	const only = String(ctx.getNodeParameter('resetProviders', 0, '') ?? '')
		.split(',')
		.map((s) => s.trim())
		.filter(Boolean);
	const names = plan.requests
		.map((r) => r.name)
		.filter((n) => only.length === 0 || only.includes(n));
	for (const n of names) await store.reset(n);
	return names.map((provider) => ({
		json: { provider, scope: plan.scope, reset: true },
		pairedItem: { item: 0 },
	}));
}
