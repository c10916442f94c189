// How the engine's skips, transitions and deferrals read on an n8n item: the same shape from
// Call Chain, the chat model's run data and the guard's two operations.
import type { IDataObject } from 'n8n-workflow';
import type { Skip, Transition } from './engine';

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
