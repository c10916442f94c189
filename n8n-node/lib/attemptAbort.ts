// One attempt's abort signal: the attempt's own timers (the engine's deadlines, as lib/timers.ts
// keeps them) and the caller's cancel signal end the same controller, and which timer fired is
// kept, so the attempt reports its deadline (the engine's TIMEOUT) rather than the error the abort
// made. An HTTP call, a chat model's call and a streamed one each take one.
import { sleep } from 'n8n-workflow';
import { Watch } from './timers';

/** The execution was cancelled: the item stops, nothing is recorded. */
export class Cancelled extends Error {
	constructor() {
		super('The execution was cancelled');
	}
}

export class AttemptAbort<Why extends string = 'deadline'> {
	private readonly controller = new AbortController();
	private readonly watches = new Set<Watch>();
	private readonly onCancel = () => this.controller.abort();
	/** The timer that ended the attempt, if one did. */
	fired: Why | undefined;

	/** Throws Cancelled when `cancel` is already aborted: no attempt starts. */
	constructor(private readonly cancel?: AbortSignal) {
		if (cancel?.aborted) throw new Cancelled();
		cancel?.addEventListener('abort', this.onCancel);
	}

	get signal(): AbortSignal {
		return this.controller.signal;
	}

	/** Whether the caller cancelled (then the attempt's outcome is not the provider's). */
	get cancelled(): boolean {
		return this.cancel?.aborted === true;
	}

	/** Abort after `ms` as `why`, unless stopped first (`restart` on it runs the time again). The
	 * abort waits one turn of the event loop, after its I/O (as `withinDeadline`): an answer, or a
	 * chunk that restarts it, that came while this process was stalled past the deadline is taken
	 * first, and a healthy provider is not charged a timeout for this process's stall. */
	after(ms: number, why: Why): Watch {
		const watch = new Watch(ms, () => {
			void sleep(0).then(() => {
				if (!this.watches.has(watch)) return; // the attempt ended, or cleared it, meanwhile
				if (watch.rearm()) return; // restarted meanwhile (a stream's chunk): its time runs again
				this.watches.delete(watch);
				this.fired ??= why;
				this.controller.abort();
			});
		});
		this.watches.add(watch);
		return watch;
	}

	clear(watch: Watch | undefined): void {
		if (watch === undefined) return;
		watch.stop();
		this.watches.delete(watch);
	}

	/** The attempt is over: no timer left, no listener on the caller's signal. */
	dispose(): void {
		for (const w of this.watches) w.stop();
		this.watches.clear();
		this.cancel?.removeEventListener('abort', this.onCancel);
	}
}
