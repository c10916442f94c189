// The memory store's breaker transition events: in-process, to the triggers active in this n8n
// process when the transition happens (no other process sees them, and none wait for a trigger).
import { EventEmitter } from 'events';

const bus = new EventEmitter();
bus.setMaxListeners(0); // one listener per active trigger workflow

export function publishMemoryEvent(scope: string, event: string): void {
	bus.emit('event', scope, event);
}

/** Calls `on` with each event of `scope`; returns the unsubscribe. */
export function subscribeMemoryEvents(scope: string, on: (event: string) => void): () => void {
	const listener = (s: string, event: string) => {
		if (s === scope) on(event);
	};
	bus.on('event', listener);
	return () => bus.off('event', listener);
}
