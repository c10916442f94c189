// The guard's tickets under the item's store policy (its FailoverStore): a shared store that
// fails or answers too slowly fails open to this process's memory, as the rows do, or closed
// (StoreUnavailable: Check defers the item `store_unavailable`). A claim also looks in this
// process's memory, where its Check may have failed open.
import { withinDeadline } from '../timers';
import type { FailoverStore } from './failover';
import { MemoryTickets, type TicketStore } from './tickets';

export class FailoverTickets implements TicketStore {
	private readonly memory: MemoryTickets;

	constructor(
		private readonly shared: TicketStore,
		scope: string,
		private readonly store: FailoverStore,
		private readonly timeoutMs: number,
	) {
		this.memory = new MemoryTickets(`fallback:${scope}`);
	}

	private async guard<T>(op: (t: TicketStore) => Promise<T>): Promise<T> {
		if (this.store.degraded) return op(this.memory);
		try {
			return await withinDeadline(op(this.shared), this.timeoutMs);
		} catch (error) {
			return this.store.fallBack((error as Error).message, () => op(this.memory));
		}
	}

	put(id: string, text: string, ttlMs: number): Promise<void> {
		return this.guard((t) => t.put(id, text, ttlMs));
	}

	async claim(id: string, text: string): Promise<boolean> {
		if (await this.guard((t) => t.claim(id, text))) return true;
		return !this.store.degraded && this.memory.claim(id, text);
	}
}
