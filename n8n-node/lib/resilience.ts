// An item's `_resilience`, shaped in one place from what the engine returned: Call Chain's items,
// the chat model's run-data entry, Check Provider's and Report Outcome's items. The same fields
// read the same everywhere: `outcome`, `provider`, `reason`, `retry_at`, `skipped`,
// `transitions`, `correlationId`, and what the store did (`storeFallback` with its warning,
// `casRacesLost`, a dropped write's warning).
import type { IDataObject } from 'n8n-workflow';
import type { AttemptLog, Decision, Skip, Transition } from './engine';
import type { ItemResult } from './itemResult';

const iso = (ms: number) => new Date(ms).toISOString();

export const skipView = (
	names: string[],
	s: Omit<Skip, 'reason'> & { reason: string },
): IDataObject => ({
	provider: names[s.provider],
	reason: s.reason,
	// Only a skip that waits for something says until when (the engine leaves it off the rest).
	...(s.until_ms === undefined ? {} : { until: iso(s.until_ms) }),
});

export const transitionView = (name: string, t: Transition): IDataObject => ({
	provider: name,
	from: t.from,
	to: t.to,
	at: iso(t.at_ms),
});

/** What the item's store did, as the engine's loop reported it. */
export interface StoreNotes {
	/** Why the shared store was left for this process's memory (fail-open), if it was. */
	storeFallback?: string;
	/** The engine's warning for it (`storeFailed`). */
	storeWarning?: string;
	/** Compare-and-set races lost. */
	casRetries: number;
	/** The engine's warnings for writes it dropped after losing every race. */
	droppedWrites?: string[];
}

/** The warnings an item's reader should see: `first` (the node's own), then the store's. */
export function storeWarnings(notes: StoreNotes, first: string[] = []): string[] {
	return [
		...first,
		...(notes.storeFallback && notes.storeWarning ? [notes.storeWarning] : []),
		...(notes.droppedWrites ?? []),
	];
}

function withStore(data: IDataObject, notes: StoreNotes, first: string[] = []): IDataObject {
	if (notes.storeFallback) data.storeFallback = notes.storeFallback;
	if (notes.casRetries) data.casRacesLost = notes.casRetries;
	const warnings = storeWarnings(notes, first);
	if (warnings.length) data.warnings = warnings;
	return data;
}

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
		_resilience: { ...meta, outcome: 'deferred', reason, retry_at },
	};
}

/** Where a Call Chain item leaves (0 success, 1 deferred, 2 failed), the fields it carries beside
 * its JSON (`retry_at`, `reason`) and its `_resilience`: one shape from what the engine returned.
 * `defaultOnExhaustion`: On Exhaustion "default" (a deferred item leaves on success, `degraded`). */
export function itemOutcome(
	r: ItemResult,
	correlationId: string,
	nodeWarnings: string[],
	defaultOnExhaustion: boolean,
): { output: 0 | 1 | 2; fields: IDataObject; meta: IDataObject } {
	const end = r.end;
	const degraded = end.kind === 'defer' && defaultOnExhaustion;
	const meta = runData(r, correlationId, nodeWarnings, degraded);
	if (end.kind === 'done' || degraded) return { output: 0, fields: {}, meta };
	if (end.kind === 'defer')
		return { output: 1, fields: { retry_at: meta.retry_at, reason: end.reason }, meta };
	return { output: 2, fields: { reason: end.reason }, meta };
}

/** An item as an AI agent's tool hands it back (agents read one output): whether it was served,
 * by whom, and else why and until when, from the `_resilience` `itemOutcome` made. */
export function toolJson(json: IDataObject): IDataObject {
	const { _resilience: meta, ...data } = json as IDataObject & { _resilience?: IDataObject };
	const status = (meta?.outcome as string) ?? 'failed';
	return {
		status,
		provider: (meta?.provider as string) ?? null,
		reason: (meta?.reason as string) ?? null,
		retry_at: (meta?.retry_at as string) ?? null,
		result: status === 'success' || status === 'degraded' ? data : null,
	};
}

/** What the engine did for one item: Call Chain's `_resilience` and the chat model's run entry.
 * `nodeWarnings`: the node's own (Retry On Fail), said before the item's; `degraded`: a deferred
 * item served the Default Value (On Exhaustion "default"). */
export function runData(
	r: ItemResult,
	correlationId: string,
	nodeWarnings: string[] = [],
	degraded = false,
): IDataObject {
	const end = r.end;
	const data: IDataObject = {
		outcome:
			end.kind === 'done'
				? 'success'
				: degraded
					? 'degraded'
					: end.kind === 'defer'
						? 'deferred'
						: 'failed',
		provider: end.kind === 'done' ? end.name : null,
		fallback: end.kind === 'done' ? end.fallback : false,
		attempts: r.attempts,
		skipped: r.skipped,
		transitions: r.transitions,
		sleptMs: r.sleptMs,
		totalMs: r.totalMs,
		correlationId,
	};
	if (end.kind === 'done' && end.checks?.length) data.checks = end.checks;
	if (end.kind !== 'done') {
		// The schema's errors of every provider's last answer that missed it (what the item failed
		// on), each under its provider, in the order they were asked.
		const last = new Map<string, IDataObject[]>();
		for (const a of r.attempts)
			if (Array.isArray(a.errors) && a.errors.length)
				last.set(String(a.name), a.errors as IDataObject[]);
		if (last.size)
			data.validation_errors = [...last].flatMap(([provider, errors]) =>
				errors.map((e) => ({ provider, ...e })),
			);
	}
	if (r.route) data.route = r.route;
	// A streamed answer broken mid-way and continued: by which model, after how many characters.
	const continued = r.attempts.filter((a) => typeof a.continued_after_chars === 'number');
	if (continued.length)
		data.continued = continued.map((a) => ({
			model: a.name,
			after_chars: a.continued_after_chars,
		}));
	if (r.windows) data.concurrency = r.windows;
	if (end.kind === 'defer') data.retry_at = iso(end.retry_at_ms);
	if (end.kind !== 'done') data.reason = end.reason;
	return withStore(data, r, nodeWarnings);
}

/** Check Provider's `_resilience` for its decision (the deferred item's `retry_at` and `reason`
 * are added by `deferredJson`). */
export function checkedData(
	decision: Decision,
	c: {
		skipped: (Omit<Skip, 'reason'> & { reason: string })[];
		transition: (Transition & { provider: number }) | null;
	},
	names: string[],
	correlationId: string,
	notes: StoreNotes,
): IDataObject {
	const data: IDataObject =
		decision.kind === 'go'
			? {
					outcome: 'go',
					provider: decision.name,
					probe: decision.ticket.probe,
					ticket: decision.ticket,
				}
			: decision.kind === 'defer'
				? { outcome: 'deferred', reason: decision.reason }
				: { outcome: 'failed', reason: decision.reason };
	data.skipped = c.skipped.map((k) => skipView(names, k));
	data.transitions = c.transition
		? [transitionView(names[c.transition.provider], c.transition)]
		: [];
	data.correlationId = correlationId;
	return withStore(data, notes);
}

/** Report Outcome's `_resilience`: the engine's verdict (`served`), its reading of the facts. */
export function reportedData(
	r: { served: boolean; attempt: AttemptLog; transition: Transition | null },
	ticket: { name: string; probe: boolean },
	correlationId: string,
	notes: StoreNotes,
): IDataObject {
	const data: IDataObject = {
		outcome: r.served ? 'success' : 'failed',
		reported: true,
		provider: ticket.name,
		probe: ticket.probe,
		health: r.attempt.health,
		// What the engine read the item's facts as: a status, "5XX", or an error code.
		observed: r.attempt.outcome,
		transitions: r.transition ? [transitionView(ticket.name, r.transition)] : [],
		correlationId,
	};
	return withStore(data, notes);
}
