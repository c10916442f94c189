// Item Concurrency Auto: the items of one execution waiting in line for a provider's window, by
// their number in the engine's pool. Who may poll again is the engine's word (a `wake` in a poll's
// or an outcome's answer names them); this keeps the waiting promises and resolves those named.
import { Cancelled } from './attemptAbort';
import type { Engine, Pool } from './engine';
import { abortOf, Watch } from './timers';

export class Line {
	private readonly waiting = new Map<number, () => void>();
	/** Woken before it began to wait (its poll's answer and the wake crossed): it polls at once. */
	private readonly early = new Set<number>();

	constructor(readonly pool: Pool) {}

	/** Wait until the engine names `member` in a wake, at most `ms`; the execution's cancel
	 * throws Cancelled. */
	async wait(member: number, ms: number, cancel?: AbortSignal): Promise<void> {
		if (cancel?.aborted) throw new Cancelled();
		if (this.early.delete(member)) return;
		let watch: Watch | undefined;
		const abort = cancel && abortOf(cancel);
		try {
			const won = await Promise.race([
				new Promise<'woken'>((resolve) => this.waiting.set(member, () => resolve('woken'))),
				new Promise<'timed out'>((resolve) => (watch = new Watch(ms, () => resolve('timed out')))),
				...(abort ? [abort.aborted.then(() => 'cancelled' as const)] : []),
			]);
			if (won === 'cancelled') throw new Cancelled();
		} finally {
			this.waiting.delete(member);
			watch?.stop();
			abort?.stop();
		}
	}

	/** The engine's wake: these members poll again. */
	wake(members: number[] | undefined): void {
		for (const m of members ?? []) {
			const resolve = this.waiting.get(m);
			if (resolve) resolve();
			else this.early.add(m);
		}
	}
}

/** One line per engine (an item's chain), for one execution's items. */
export function linesFor(ceiling: number): (engine: Engine) => Line {
	const lines = new Map<Engine, Line>();
	return (engine) => {
		let line = lines.get(engine);
		if (!line) lines.set(engine, (line = new Line(engine.pool(ceiling))));
		return line;
	};
}
