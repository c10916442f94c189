// Get Metrics: the Prometheus text exposition format for the chain's providers in its scope. The
// engine renders it from the rows and counters (src/report/metrics.rs); this file moves them and the text.
import type { INodeExecutionData } from 'n8n-workflow';
import { engineModule, type Engine } from './engine';
import { METRIC_HELP, ROW_SEPARATOR } from './engineConstants';
import type { ItemPlan } from './params';
import type { FailoverStore } from './store/failover';

/** What a `/metrics` answer declares (Respond to Webhook: Response Headers). */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export async function providerMetrics(
	engine: Engine,
	store: FailoverStore,
	plan: ItemPlan,
): Promise<INodeExecutionData[]> {
	const names = plan.requests.map((r) => r.name);
	const snap = await store.read(names);
	const counters = await store.readCounters(names);
	// Metrics of this process's memory would pass for the fleet's: while the store is down, only
	// that it is, and this process's fall-backs to memory (the engine's count).
	const text = withHelp(
		store.degraded
			? engineModule().storeDownMetrics(plan.scope)
			: engine.metrics(
					snap.now,
					plan.scope,
					snap.rows.join(ROW_SEPARATOR),
					JSON.stringify(names.map((n) => counters[n] ?? {})),
				),
	);
	return [
		{
			json: {
				metrics: text,
				contentType: METRICS_CONTENT_TYPE,
				scope: plan.scope,
				...(store.degraded ? { storeDown: store.degraded } : {}),
			},
			pairedItem: { item: 0 },
		},
	];
}

/** Each family's `# HELP` line before its `# TYPE` line: the engine renders the types, and its
 * help texts are kept here (generated from the engine's table) rather than in its WASM. */
export function withHelp(text: string): string {
	return text.replace(/^# TYPE (\S+) /gm, (line, name: string) =>
		name in METRIC_HELP ? `# HELP ${name} ${METRIC_HELP[name]}\n${line}` : line,
	);
}
