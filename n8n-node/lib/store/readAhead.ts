// A shared store that serves the next item's read from rows already read, while the engine allows
// it: at Item Concurrency 1 the store's round trip then overlaps a call, or is not made at all.
// After each poll that hands out a call, the engine grants the rows it decided on, or rows read
// while that call is out, to the next decision (`read_ahead`, src/rows/read_ahead.rs): they serve it
// until `serves_ms` after they were read, if no write of this execution to the scope began or
// ended since the read began (an item sees its own execution's writes); rows older than
// `read_again_ms` when the call goes out are read again while it is out. Each grant serves one
// read. Policy-free: it compares texts, counts writes, keeps when each read came back and hands
// the engine its age (`readServes`), which says whether it still serves.
import { engineModule, type ReadAhead, type RowWrite } from '../engine';
import type { Snapshot, StateStore } from './types';

interface LastRead {
	keys: string;
	/** This store's write count when the read began. */
	writes: number;
	snap: Promise<Snapshot | undefined>;
	/** When the read came back (local clock); absent while it is out. */
	at?: number;
	/** The engine's grant: the read may serve one more read until `at + servesMs` (0: none). */
	servesMs: number;
	/** Begun for the next item while a call was out (what `tally.discarded` counts). */
	ahead: boolean;
}

export class ReadAheadStore implements StateStore {
	private last: LastRead | undefined;
	/** Writes begun or ended through this store: a read is stale once this moves. */
	private writes = 0;
	/** Reads answered from rows already read; grants that ran out before the read they were for
	 * (a slow call, a stalled process); reads ahead thrown away unused. What the store tests read. */
	readonly tally = { used: 0, expired: 0, discarded: 0 };

	/** `clock`: this process's clock (ms), injected by tests; it times only how old a read is. */
	constructor(
		private readonly store: StateStore,
		private readonly clock: () => number = Date.now,
	) {}

	/** The engine's grant for the next read of `keys`: the last read serves it if it is still out
	 * or younger than `read_again_ms`; else a new read begins while the call is out. */
	readAhead(keys: string[], grant: ReadAhead): void {
		const k = keys.join('\u0000');
		const r = this.last;
		if (r && r.keys === k && r.writes === this.writes) {
			if (
				r.at === undefined ||
				engineModule().readServes(this.clock() - r.at, grant.read_again_ms)
			) {
				r.servesMs = grant.serves_ms;
				return;
			}
		}
		if (r?.ahead) this.tally.discarded++;
		this.last = this.keep(this.store.read(keys), k, true, grant.serves_ms);
	}

	async read(keys: string[], granted = true): Promise<Snapshot> {
		if (!granted) return this.store.read(keys); // the grant, and the read kept, stay the next item's
		const k = keys.join('\u0000');
		const r = this.last;
		if (r && r.keys === k && r.servesMs > 0) {
			const snap = await r.snap;
			if (snap && r.writes === this.writes && r.at !== undefined) {
				if (engineModule().readServes(this.clock() - r.at, r.servesMs)) {
					r.servesMs = 0; // one read per grant: the next decision needs the engine's word again
					r.ahead = false;
					this.tally.used++;
					// The rows as read; the store's clock moved on as this one did since.
					return { now: snap.now + (this.clock() - r.at), rows: snap.rows };
				}
				this.tally.expired++;
			}
		}
		if (r?.ahead) this.tally.discarded++;
		const read = this.store.read(keys);
		this.last = this.keep(read, k, false, 0);
		return read; // a failed read is the store's failure: the item meets it here
	}

	/** A read kept to serve a later one; failed, it serves nothing. */
	private keep(read: Promise<Snapshot>, k: string, ahead: boolean, servesMs: number): LastRead {
		const r: LastRead = { keys: k, writes: this.writes, servesMs, ahead, snap: read };
		r.snap = read.then(
			(snap) => ((r.at = this.clock()), snap),
			() => undefined,
		);
		return r;
	}

	async write(key: string, rows: RowWrite[], event?: string | null): Promise<boolean> {
		this.writes++;
		try {
			return await this.store.write(key, rows, event);
		} finally {
			// Also after: a read begun while this write was out may not have seen it.
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
