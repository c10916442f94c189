// What one item's run through the engine gave: its end, the serving body, what the engine did
// on the way (attempts, skips, transitions, waits) and what the store did (fell back, lost
// races, dropped writes), for its `_resilience` (resilience.ts) and the counters.
import type { IDataObject } from 'n8n-workflow';
import type { Counters, FinalStep } from './engine';
import type { RaceTally } from './store/compareAndSet';

export interface ItemResult {
	end: FinalStep;
	/** The serving provider's response body (done only). */
	body?: unknown;
	/** Its JSON as the Answer Check's schema parsed it (done only). */
	parsed?: unknown;
	attempts: IDataObject[];
	skipped: IDataObject[];
	transitions: IDataObject[];
	sleptMs: number;
	totalMs: number;
	/** Why the shared store was left for this process's memory (fail-open), if it was. */
	storeFallback?: string;
	/** The engine's warning for it. */
	storeWarning?: string;
	/** Compare-and-set races this item lost (each one a re-read and retry; what happens at the
	 * bound is the engine's `raceLost`). */
	casRetries: number;
	/** The engine's warnings for outcomes whose write it dropped after losing every race. */
	droppedWrites: string[];
	/** This item's contribution to each provider's counters (index = provider). */
	counters: Counters[];
	/** What this item's committed writes add to the counters (a transition each). */
	committed: RaceTally['committed'];
	/** Item Concurrency Auto: each provider's window when the item ended (calls at once). */
	windows?: Record<string, number | undefined>;
	/** How the engine routed the item: its routing and the providers in the order it chose
	 * (absent for a configured order in one tier). */
	route?: { routing: string; order: string[] };
}
