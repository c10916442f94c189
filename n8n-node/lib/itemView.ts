// How the engine's skips, transitions and deferrals read on an n8n item: the same shape from
// Call Chain, the chat model's run data and the guard's two operations.
import type { IDataObject } from 'n8n-workflow';
import type { Skip, Transition } from './engine';
import type { ItemResult } from './runItem';

const iso = (ms: number) => new Date(ms).toISOString();

export const skipView = (
	names: string[],
	s: Omit<Skip, 'reason'> & { reason: string },
): IDataObject => ({
	provider: names[s.provider],
	reason: s.reason,
	until: iso(s.until_ms),
});

export const transitionView = (name: string, t: Transition): IDataObject => ({
	provider: name,
	from: t.from,
	to: t.to,
	at: iso(t.at_ms),
});

/** A deferred item: the input's JSON with `retry_at` and `reason`, also under `_resilience`. */
export function deferredJson(
	input: IDataObject,
	reason: string,
	retryAtMs: number,
	meta: IDataObject = {},
): IDataObject {
	const retry_at = iso(retryAtMs);
	return {
		...input,
		retry_at,
		reason,
		_resilience: { outcome: 'deferred', reason, retry_at, ...meta },
	};
}

/** What the engine did for one item: Call Chain's `_resilience` and the chat model's run entry. */
export function runData(r: ItemResult, correlationId: string): IDataObject {
	const end = r.end;
	const data: IDataObject = {
		outcome: end.kind === 'done' ? 'success' : end.kind === 'defer' ? 'deferred' : 'failed',
		provider: end.kind === 'done' ? end.name : null,
		fallback: end.kind === 'done' ? end.fallback : false,
		attempts: r.attempts,
		skipped: r.skipped,
		transitions: r.transitions,
		sleptMs: r.sleptMs,
		totalMs: r.totalMs,
		correlationId,
	};
	if (r.route) data.route = r.route;
	if (end.kind === 'defer') data.retry_at = iso(end.retry_at_ms);
	if (end.kind !== 'done') data.reason = end.reason;
	if (r.storeFallback) data.storeFallback = r.storeFallback;
	if (r.casRetries) data.casRacesLost = r.casRetries;
	const warnings = storeWarnings(r);
	if (warnings.length) data.warnings = warnings;
	return data;
}

/** What the item's store did that its reader should know: memory instead of the shared store,
 * an outcome the engine gave up writing. */
export function storeWarnings(r: ItemResult): string[] {
	return [
		...(r.storeFallback
			? [`state store unavailable (${r.storeFallback}): this item used this process's memory`]
			: []),
		...r.droppedWrites,
	];
}
