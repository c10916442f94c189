// A shared store that can read the next item's rows while this item's call is out: at Item
// Concurrency 1 the read's round trip then overlaps the call instead of following it. A read
// ahead is handed to the next read of the same keys only if no write of this execution to the
// scope began or ended since it began (an item sees its own execution's writes), and only for
// as long after the read as the engine's poll said (`read_ahead_ms`, src/read_ahead.rs);
// otherwise that read goes to the store. Policy-free: it compares texts, counts writes, keeps
// the time it was given.
import type { RowWrite } from '../engine';
import type { Snapshot, StateStore } from './types';

interface Pending {
	keys: string;
	writes: number;
	/** Past this (local clock), the read may no longer serve: read time + the engine's ms. */
	snap: Promise<{ snap: Snapshot; until: number } | undefined>;
}

export class ReadAheadStore implements StateStore {
	private pending: Pending | undefined;
	/** Writes begun or ended through this store: a read ahead is stale once this moves. */
	private writes = 0;
	/** Reads answered by a read ahead, and reads ahead thrown away (what the store tests read). */
	readonly tally = { used: 0, discarded: 0 };

	constructor(private readonly store: StateStore) {}

	/** Start reading `keys` for the next item, unless a read ahead is already out; it may serve
	 * for `servesMs` after it is read (the engine's `read_ahead_ms`). */
	readAhead(keys: string[], servesMs: number): void {
		if (this.pending) return;
		const writes = this.writes;
		this.pending = {
			keys: keys.join('\u0000'),
			writes,
			// A failed read ahead is no read: the item reads afresh (and meets the failure there).
			snap: this.store.read(keys).then(
				(snap) => ({ snap, until: Date.now() + servesMs }),
				() => undefined,
			),
		};
	}

	async read(keys: string[]): Promise<Snapshot> {
		const p = this.pending;
		this.pending = undefined;
		if (p && p.keys === keys.join('\u0000')) {
			const got = await p.snap;
			if (got && p.writes === this.writes && Date.now() <= got.until) {
				this.tally.used++;
				return got.snap;
			}
		}
		if (p) this.tally.discarded++;
		return this.store.read(keys);
	}

	async write(key: string, rows: RowWrite[], event?: string | null): Promise<boolean> {
		this.writes++;
		try {
			return await this.store.write(key, rows, event);
		} finally {
			// Also after: a read ahead begun while this write was out may not have seen it.
			this.writes++;
		}
	}

	now(): Promise<number> {
		return this.store.now();
	}
	reset(key: string): Promise<void> {
		this.writes++;
		return this.store.reset(key);
	}
	addCounters(deltas: Record<string, Record<string, number>>): Promise<void> {
		return this.store.addCounters(deltas);
	}
	readCounters(keys: string[]): Promise<Record<string, Record<string, number>>> {
		return this.store.readCounters(keys);
	}
}

/** One read-ahead store per scope for one execution's items, over the shared store's. */
export function readAheadScopes(
	shared: (scope: string) => StateStore,
): (scope: string) => ReadAheadStore {
	const byScope = new Map<string, ReadAheadStore>();
	return (scope) => {
		let s = byScope.get(scope);
		if (!s) byScope.set(scope, (s = new ReadAheadStore(shared(scope))));
		return s;
	};
}
