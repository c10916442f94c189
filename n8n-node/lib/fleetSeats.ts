// The fleet's learned limit: an execution that ends with none of its process's calls out to a
// provider gives this process's share of the limit back at once, so another worker (or the next
// `n8n execute` process) need not wait for the share's lease to end. Which providers and what to
// write are the engine's word; a failure here only leaves the share to its lease.
import type { Logger } from 'n8n-workflow';
import type { Engine } from './engine';
import { ROW_SEPARATOR } from './engineConstants';
import { compareAndSet, newTally } from './store/compareAndSet';
import type { FailoverStore } from './store/failover';

export async function leaveSeats(
	engine: Engine,
	store: FailoverStore,
	keys: string[],
	logger: Logger,
): Promise<void> {
	for (const provider of engine.idleSeats()) {
		try {
			await compareAndSet(engine, store, keys, false, newTally(), async () => {
				const snap = await store.read([keys[provider]], false);
				return engine.leave(snap.now, snap.rows.join(ROW_SEPARATOR), provider);
			});
		} catch (error) {
			logger.warn(
				`resilient-provider-call: the share of "${keys[provider]}" is left to its lease: ${(error as Error).message}`,
			);
		}
	}
}
