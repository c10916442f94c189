// A state store is policy-free: it reads rows, and writes back the rows the engine computed,
// atomically (compare-and-set on `version`). Time is the store's clock, so workers agree.
import type { ProviderView, Writes } from '../engine';

export interface Snapshot {
	/** The store's clock, ms since the epoch. */
	now: number;
	views: ProviderView[];
}

export interface StateStore {
	/** One round trip: the rows of these providers and the store's time. */
	read(keys: string[]): Promise<Snapshot>;
	/** Write `writes` for `keys[writes.provider]` iff stored versions are still the previous ones. */
	write(keys: string[], writes: Writes): Promise<boolean>;
	/** The store's clock alone. */
	now(): Promise<number>;
	/** Forget a provider's rows and counters (Reset Provider). */
	reset(key: string): Promise<void>;
	/** Add to providers' counters (one round trip for a whole execution). */
	addCounters(deltas: Record<string, Record<string, number>>): Promise<void>;
	readCounters(keys: string[]): Promise<Record<string, Record<string, number>>>;
}
