// One owner of retries: a connected model called through the Resilient Chat Model makes exactly
// one request per engine attempt. LangChain clients retry in their AsyncCaller, read at call time,
// and ChatOpenAI keeps one caller per API (`completions`, `responses`) built from `fields`, which
// `bindTools` rebuilds from: all of them are set to 0 (the SDKs' own clients already run at 0).

interface Retrying {
	maxRetries?: number;
	fields?: { maxRetries?: number };
	caller?: { maxRetries?: number };
	completions?: unknown;
	responses?: unknown;
	bound?: unknown;
}

/** Switches off every client retry reachable from `model` (itself, its inner callers, a
 * RunnableBinding's bound model); returns the model. */
export function retriesOff<T>(model: T): T {
	const seen = new Set<unknown>();
	const visit = (x: unknown) => {
		if (!x || typeof x !== 'object' || seen.has(x)) return;
		seen.add(x);
		const m = x as Retrying;
		if (m.fields && typeof m.fields === 'object') m.fields.maxRetries = 0;
		if (typeof m.maxRetries === 'number') m.maxRetries = 0;
		if (m.caller && typeof m.caller === 'object' && 'maxRetries' in m.caller)
			m.caller.maxRetries = 0;
		visit(m.completions);
		visit(m.responses);
		visit(m.bound);
	};
	visit(model);
	return model;
}
