// The memory store's breaker transition events: in-process, to the triggers active in this n8n
// process when the transition happens (no other process sees them, and none wait for a trigger).
// A plain set of listeners: node:events is not among the modules n8n lets a community node load.

type Listener = (scope: string, event: string) => void;

const listeners = new Set<Listener>(); // one per active trigger workflow

export function publishMemoryEvent(scope: string, event: string): void {
	for (const listener of [...listeners]) listener(scope, event);
}

/** Calls `on` with each event of `scope`; returns the unsubscribe. */
export function subscribeMemoryEvents(scope: string, on: (event: string) => void): () => void {
	const listener: Listener = (s, event) => {
		if (s === scope) on(event);
	};
	listeners.add(listener);
	return () => listeners.delete(listener);
}
