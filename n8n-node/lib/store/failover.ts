// A shared store guarded by a per-operation timeout. When it is unreachable, too slow or keeps
// losing compare-and-set races, the engine says what next (`storeFailed`, src/rows/store_failure.rs,
// on the node's On Store Failure setting): carry on with this process's memory, marking the item
// (fail open), or defer the item (fail closed: StoreUnavailable with the engine's reason). Rows,
// tickets (ticketsFailover.ts) and the counters' write all fail over here. Never crash.
import type { Logger } from 'n8n-workflow';
import { engineModule, type ReadAhead, type Reason, type RowWrite } from '../engine';
import { withinDeadline } from '../timers';
import { MemoryStore } from './memory';
import type { Snapshot, StateStore } from './types';

/** The engine's verdict on a failed store: defer the item with `reason`. */
export class StoreUnavailable extends Error {
	constructor(
		readonly reason: Reason,
		cause: string,
	) {
		super(`state store unavailable: ${cause}`);
	}
}

let lastWarning = 0;

export class FailoverStore implements StateStore {
	/** Set once this item fell back to memory (fail-open): the store's failure. */
	degraded: string | undefined;
	/** The engine's warning for the item when it fell back. */
	warning: string | undefined;
	private readonly memory: MemoryStore;

	constructor(
		private readonly shared: StateStore,
		private readonly scope: string,
		private readonly timeoutMs: number,
		private readonly failOpen: boolean,
		private readonly logger?: Logger,
	) {
		this.memory = new MemoryStore(`fallback:${scope}`);
	}

	private async guard<T>(op: (s: StateStore) => Promise<T>): Promise<T> {
		if (this.degraded) return op(this.memory);
		try {
			return await withinDeadline(op(this.shared), this.timeoutMs);
		} catch (error) {
			return this.fallBack((error as Error).message, op);
		}
	}

	/** Also used by the caller when compare-and-set retries run out. */
	async fallBack<T>(cause: string, op: (s: StateStore) => Promise<T>): Promise<T> {
		const verdict = engineModule().storeFailed(this.failOpen, cause, this.scope);
		if (verdict.kind === 'defer') throw new StoreUnavailable(verdict.reason, verdict.cause);
		this.degraded = cause;
		this.warning = verdict.warning;
		if (Date.now() - lastWarning > 60_000) {
			lastWarning = Date.now();
			this.logger?.warn(
				`resilient-provider-call: state store unavailable (${cause}); failing open to this process's memory`,
			);
		}
		return op(this.memory);
	}

	read(keys: string[], granted = true): Promise<Snapshot> {
		return this.guard((s) => s.read(keys, granted));
	}
	/** Only while the shared store serves this item: its memory has no round trip to hide. */
	readAhead(keys: string[], grant: ReadAhead): void {
		if (!this.degraded) this.shared.readAhead?.(keys, grant);
	}
	/** A transition decided in this process's memory (fail-open) is not the fleet's: its event is
	 * not written anywhere (README: "Resilient Provider Trigger"); the item still lists it. */
	write(key: string, rows: RowWrite[], event?: string | null): Promise<boolean> {
		return this.guard((s) => (s === this.memory ? s.write(key, rows) : s.write(key, rows, event)));
	}
	/** The store's clock as of its last answer: local arithmetic, so no timeout to guard. */
	now(): Promise<number> {
		return (this.degraded ? this.memory : this.shared).now();
	}
	reset(key: string): Promise<void> {
		return this.guard((s) => s.reset(key));
	}
	addCounters(deltas: Record<string, Record<string, number>>): Promise<void> {
		return this.guard((s) => s.addCounters(deltas));
	}
	readCounters(keys: string[]): Promise<Record<string, Record<string, number>>> {
		return this.guard((s) => s.readCounters(keys));
	}
}
