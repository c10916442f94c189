// The counters of every entry point (Call Chain, the chat model, Check Provider, Report Outcome),
// one path: the engine says what each item, call or check adds to each provider's counters
// (`End.counters`, `Checked.counters`, `Reported.counters`) and which transition it made; this
// sums them per scope and provider and writes them with one checked write per scope, never on
// the per-call path of a static node. Nothing here decides what counts.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import type { Counters } from './engine';
import type { RaceTally } from './store/compareAndSet';
import type { FailoverStore } from './store/failover';

type Deltas = Record<string, Record<string, number>>;

export class CounterDeltas {
	private readonly by = new Map<string, Deltas>();

	/** `counters[i]` is provider `names[i]`'s share; `committed` what the writes that committed
	 * add (their `provider` an index into `names` too). */
	add(
		scope: string,
		names: string[],
		counters: (Counters | Record<string, number>)[],
		committed: RaceTally['committed'] = [],
	): void {
		const s = this.by.get(scope) ?? {};
		const sum = (name: string, c: object) => {
			const p = (s[name] ??= {});
			for (const [k, v] of Object.entries(c) as [string, number][]) if (v) p[k] = (p[k] ?? 0) + v;
		};
		counters.forEach((c, i) => sum(names[i], c));
		for (const w of committed) sum(names[w.provider], w.counts);
		this.by.set(scope, s);
	}

	/** The checked write, one per scope: what failed, or went to this process's memory because
	 * the store was down (fail-open), is returned as one warning per scope (the metrics miss it). */
	async write(storeOf: (scope: string) => FailoverStore): Promise<string[]> {
		const warnings: string[] = [];
		for (const [scope, deltas] of this.by) {
			const store = storeOf(scope);
			const failed = await store.addCounters(deltas).then(
				() => store.degraded,
				(e: Error) => e.message,
			);
			if (failed)
				warnings.push(
					`counters of scope "${scope}" not written to the shared store (${failed}): the metrics miss this execution`,
				);
		}
		this.by.clear();
		return warnings;
	}
}

/** Each warning on every item's `_resilience.warnings`. */
export function warnAll(out: INodeExecutionData[][], warnings: string[]): void {
	if (!warnings.length) return;
	for (const o of out)
		for (const item of o) {
			const r = item.json._resilience as IDataObject | undefined;
			if (r) r.warnings = [...((r.warnings as string[] | undefined) ?? []), ...warnings];
		}
}
