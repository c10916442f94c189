// One attempt's abort signal: the attempt's own timers (the engine's deadlines) and the caller's
// cancel signal end the same controller, and which timer fired is kept, so the attempt reports
// its deadline (the engine's TIMEOUT) rather than the error the abort made. An HTTP call, a chat
// model's call and a streamed one each take one.

/** The execution was cancelled: the item stops, nothing is recorded. */
export class Cancelled extends Error {
	constructor() {
		super('The execution was cancelled');
	}
}

export class AttemptAbort<Why extends string = 'deadline'> {
	private readonly controller = new AbortController();
	private readonly timers = new Set<ReturnType<typeof setTimeout>>();
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

	/** Abort after `ms` as `why`, unless cleared first. */
	after(ms: number, why: Why): ReturnType<typeof setTimeout> {
		const timer = setTimeout(() => {
			this.timers.delete(timer);
			this.fired ??= why;
			this.controller.abort();
		}, ms);
		this.timers.add(timer);
		return timer;
	}

	clear(timer: ReturnType<typeof setTimeout> | undefined): void {
		if (timer === undefined) return;
		clearTimeout(timer);
		this.timers.delete(timer);
	}

	/** The attempt is over: no timer left, no listener on the caller's signal. */
	dispose(): void {
		for (const t of this.timers) clearTimeout(t);
		this.timers.clear();
		this.cancel?.removeEventListener('abort', this.onCancel);
	}
}
