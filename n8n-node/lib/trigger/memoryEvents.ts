// Transition events of the memory store: this process's, as they happen (nothing waits for a
// trigger that is off, and no other process's transitions are seen).
import { subscribeMemoryEvents } from '../store/memoryEvents';
import type { EventSource, OnEvent } from './source';

export class MemoryEventSource implements EventSource {
	private off: (() => void) | undefined;

	constructor(private readonly scope: string) {}

	async start(on: OnEvent, onError: (e: Error) => void): Promise<void> {
		this.off = subscribeMemoryEvents(this.scope, (event) => {
			Promise.resolve(on(event)).catch(onError);
		});
	}

	async close(): Promise<void> {
		this.off?.();
	}
}
